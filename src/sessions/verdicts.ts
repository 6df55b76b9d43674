/**
 * The verdicts on what an agent does next that read more than its session: a step's verdict and the
 * drift check, which may ask a provider first, each outside any transaction (the embeddings cosine,
 * similarity-lookup.ts; a due second opinion, opinion-lookup.ts; the LLM verification, on a private
 * copy) before the engine runs and the store writes (store.ts), a step that reports spend charging
 * the agent's day in its own write; and a coding agent's tool call and stop, which the agent's day
 * spent decides first.
 */
import type { UnitOfWork } from '../db/unit-of-work.js'
import type { Clock } from '../engine/clock.js'
import type { DriftCheck } from '../engine/drift/goal-dna.js'
import type { GoalSession, SessionEvent, StepResult } from '../engine/session/goal-session.js'
import type { LlmVerifyFn } from '../engine/session/llm-verify.js'
import type { StopCheck } from '../engine/session/agent-turn.js'
import { SessionConfigError, type SessionConfigInput } from '../engine/session/session-config.js'
import type { StepTool } from '../engine/detection/loop-kinds.js'
import { toolCallText } from '../engine/detection/step-keys.js'
import { stepCost } from '../engine/detection/spend-budget.js'
import { truncateChars } from '../engine/similarity/text.js'
import type { Metrics } from '../metrics.js'
import type { GoalEmbeddings } from '../providers/embeddings.js'
import type { AgentDays } from './agent-days.js'
import { signalColumns, signalsOf, type StepInput } from './model.js'
import { prepareOpinion } from './opinion-lookup.js'
import { assertActive, type Outcome } from './outcome.js'
import type { SessionRepository } from './repository.js'
import { lookUp, noteFallback, NO_PROVIDER, similarityFor, type LookedUp } from './similarity-lookup.js'
import type { SessionStore } from './store.js'

interface SessionVerdictsDeps {
  store: SessionStore
  repo: SessionRepository
  daily: AgentDays
  clock: Clock
  metrics: Metrics
  llmVerify: LlmVerifyFn | undefined
  llmOpinion: LlmVerifyFn | undefined
  embeddings: GoalEmbeddings | undefined
}

export class SessionVerdicts {
  private readonly store: SessionStore
  private readonly repo: SessionRepository
  private readonly daily: AgentDays
  private readonly clock: Clock
  private readonly metrics: Metrics
  private readonly llmVerify: LlmVerifyFn | undefined
  private readonly llmOpinion: LlmVerifyFn | undefined
  private readonly embeddings: GoalEmbeddings | undefined

  constructor(deps: SessionVerdictsDeps) {
    this.store = deps.store
    this.repo = deps.repo
    this.daily = deps.daily
    this.clock = deps.clock
    this.metrics = deps.metrics
    this.llmVerify = deps.llmVerify
    this.llmOpinion = deps.llmOpinion
    this.embeddings = deps.embeddings
  }

  /** A session may use only the providers configured: throws for a config that needs a missing one. */
  checkProviders(config: SessionConfigInput | undefined): void {
    if (config?.similarity === 'embeddings' && this.embeddings === undefined) throw new SessionConfigError('similarity', `'embeddings' needs an embeddings provider: ${NO_PROVIDER}`)
    if (config?.llm_verify === true && this.llmVerify === undefined) throw new SessionConfigError('llm_verify', 'true needs an LLM: no LLM configured (GOALKEEPER_LLM_URL)')
    if (config?.second_opinion !== undefined && this.llmOpinion === undefined) throw new SessionConfigError('second_opinion', 'needs an LLM: no LLM configured (GOALKEEPER_LLM_URL)')
  }

  /**
   * The per-step verdict. With `config.llm_verify` and an LLM configured, the LLM is asked outside
   * any transaction, on a private copy that commits only if no other write came first; a second
   * opinion that is due (`config.second_opinion`) is asked before either (opinion-lookup.ts).
   */
  async step(agentId: string, id: string, input: StepInput, uow: UnitOfWork): Promise<StepResult> {
    const description = input.description
    const output = input.output ?? ''
    // As the journal will replay them (through the row's columns), so a restart gives the same verdicts.
    const signals = signalsOf(signalColumns(input))
    // Only a step that spends can move the agent's day: the others need not read its budget.
    const day = signals.tokens !== undefined || signals.cost_usd !== undefined ? await this.daily.budgetOf(agentId, this.clock()) : null
    const stepOn = (s: GoalSession, raw: StepResult & { events: SessionEvent[] }, looked?: LookedUp, snapshot = false): Outcome<StepResult> => {
      noteFallback(raw.drift, looked)
      const { events, ...result } = raw
      const outcome: Outcome<StepResult> = { result, events, drift_events: result.drift.event === null ? [] : [result.drift.event], step: { input, result }, snapshot }
      if (day !== null)
        outcome.inTransaction = () => this.daily.charge(agentId, id, day, signals.tokens ?? 0, stepCost(signals.tokens, signals.cost_usd, s.config.budget?.usd_per_million_tokens), outcome)
      return outcome
    }
    // Without an LLM or embeddings configured there is nothing to look up first: one read, inside the write.
    if (this.llmVerify === undefined && this.llmOpinion === undefined && this.embeddings === undefined) {
      return this.counted(await this.store.mutate(uow, agentId, id, (s) => stepOn(s, s.step(description, output, undefined, signals))))
    }
    const meta = await this.store.meta(agentId, id)
    assertActive(meta)
    const looked = await lookUp(this.embeddings, meta, description)
    // A step with an opinion is not replayable as a journal entry (a replay asks no LLM): it takes a snapshot.
    const opinion = await prepareOpinion(this.store, this.repo, this.llmOpinion, meta, description, output)
    const llmVerify = this.llmVerify
    if (llmVerify === undefined || (JSON.parse(meta.config) as { llm_verify?: boolean }).llm_verify !== true) {
      return this.counted(await this.store.mutate(uow, agentId, id, (s) => stepOn(s, s.step(description, output, similarityFor(s, looked), signals, opinion), looked, opinion !== undefined)))
    }
    // Computed while the clock ran on: not replayable as a journal entry, so it takes a snapshot.
    const verified = (copy: GoalSession) => copy.stepAsync(description, output, llmVerify, similarityFor(copy, looked), signals, opinion)
    return this.counted(await this.store.mutateCopy(uow, meta, async (copy) => stepOn(copy, await verified(copy), looked, true)))
  }

  private counted(result: StepResult): StepResult {
    this.metrics.verdicts.inc({ action: result.verification.recommended_action })
    return result
  }

  /** A session using embeddings asks the provider first, outside the transaction. */
  async driftCheck(agentId: string, id: string, action: string, stepNumber: number | undefined, uow: UnitOfWork): Promise<DriftCheck> {
    let looked: LookedUp | undefined
    if (this.embeddings !== undefined) {
      const meta = await this.store.meta(agentId, id)
      // An archived session answers 409 from the write below, without asking the provider.
      if (meta.status === 'active') looked = await lookUp(this.embeddings, meta, action)
    }
    return await this.store.mutate(uow, agentId, id, (s) => {
      const { result, events } = s.driftCheck(action, stepNumber, similarityFor(s, looked))
      noteFallback(result, looked)
      return { result, events, drift_events: result.event === null ? [] : [result.event] }
    })
  }

  /** Read-only: why a coding agent should not make this tool call now (the agent's daily budget spent, SessionDetection.gate), or null. */
  async gateTool(agentId: string, id: string, tool: StepTool): Promise<string | null> {
    const spent = await this.daily.spent(agentId)
    if (spent !== null) {
      await this.store.key(agentId, id)
      return `goalkeeper: ${spent}, so "${truncateChars(toolCallText(tool), 120)}" is not run. Stop here and report what is done and what is left.`
    }
    return this.store.read(agentId, id, (s) => s.gateTool(tool))
  }

  /** A coding agent wants to stop: whether to ask it to carry on with open plan items (`session.stopped` when it may stop). */
  async stop(agentId: string, id: string, maxBlocks: number, uow: UnitOfWork): Promise<StopCheck> {
    const spent = (await this.daily.spent(agentId)) !== null
    return this.store.mutate(uow, agentId, id, (s) => s.stop(maxBlocks, spent))
  }
}
