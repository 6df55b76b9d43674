/**
 * Goal sessions: lifecycle, the per-step verdict, drift checks, reminders and recitation. Each
 * write loads the session (scoped by agent), runs the pure engine and persists in the caller's
 * unit of work (store.ts); reads use the cached engine of the row's current version.
 */
import type { SqlDatabase } from '../db/database.js'
import { UnitOfWork } from '../db/unit-of-work.js'
import type { Clock } from '../engine/clock.js'
import type { DriftCheck, DriftEvent, DriftTrend } from '../engine/drift/goal-dna.js'
import type { GoalReminder } from '../engine/context/goal-reminder.js'
import type { GoalSession, RecitationContext, RecitationInjection, RecitationPreview, ReminderOverrides, SessionEvent, SessionSummary, StepResult } from '../engine/session/goal-session.js'
import type { GoalState } from '../engine/session/goal-tracker.js'
import type { LlmVerifyFn } from '../engine/session/llm-verify.js'
import type { ChatMessage } from '../engine/context/recitation.js'
import type { StopCheck } from '../engine/session/agent-turn.js'
import type { StepTool } from '../engine/detection/loops.js'
import { SessionConfigError } from '../engine/session/session-config.js'
import { toolsProblem } from '../engine/detection/detection-config.js'
import { stepCost } from '../engine/detection/spend-budget.js'
import { toolCallText } from '../engine/detection/loops.js'
import { truncateChars } from '../engine/similarity/text.js'
import { AgentDays } from './agent-days.js'
import { badRequest, conflict, fieldPath, notFound } from '../errors.js'
import { newId } from '../ids.js'
import type { Metrics } from '../metrics.js'
import { intCursor, pageOf, type Page } from '../pagination.js'
import type { GoalEmbeddings } from '../providers/embeddings.js'
import type { TurnPartsProvider } from '../reminders/turns.js'
import {
  SPARKLINE_STEPS,
  signalColumns,
  signalsOf,
  toDigest,
  toDriftEvent,
  toSession,
  toStep,
  type CreateSessionInput,
  type Session,
  type SessionDigest,
  type SessionStatus,
  type StepInput,
  type StepLogEntry,
} from './model.js'
import { prepareOpinion } from './opinion-lookup.js'
import { lookUp, noteFallback, NO_PROVIDER, similarityFor, type LookedUp } from './similarity-lookup.js'
import { SessionRepository, type SessionFilter } from './repository.js'
import { assertActive, type Outcome } from './outcome.js'
import { SessionStore } from './store.js'
import { sessionTurnParts, type SessionTurnParts, type TurnPartsInput } from './turn-parts.js'

export interface SessionsDeps {
  db: SqlDatabase
  clock: Clock
  metrics: Metrics
  /** Set when GOALKEEPER_LLM_URL is configured; used by sessions with `config.llm_verify`. */
  llmVerify?: LlmVerifyFn
  /** The same LLM with room for an analysis; used by sessions with `config.second_opinion`. */
  llmOpinion?: LlmVerifyFn
  llmTimeoutMs?: number
  /** Set when GOALKEEPER_EMBEDDINGS_URL is configured; used by sessions with `config.similarity: embeddings`. */
  embeddings?: GoalEmbeddings
  /** Hydrated sessions kept in memory (default SESSION_CACHE_MAX, store.ts); 0 turns the cache off. */
  cacheMax?: number
  /** Their estimated heap at most (default: a share of the heap limit, store.ts). */
  cacheMaxBytes?: number
}

export class SessionsService implements TurnPartsProvider {
  private readonly store: SessionStore
  private readonly repo: SessionRepository
  private readonly db: SqlDatabase
  private readonly clock: Clock
  private readonly metrics: Metrics
  private readonly llmVerify: LlmVerifyFn | undefined
  private readonly llmOpinion: LlmVerifyFn | undefined
  private readonly embeddings: GoalEmbeddings | undefined
  private readonly daily: AgentDays

  constructor(deps: SessionsDeps) {
    this.db = deps.db
    this.daily = new AgentDays(deps.db, deps.clock)
    this.clock = deps.clock
    this.metrics = deps.metrics
    this.llmVerify = deps.llmVerify
    this.llmOpinion = deps.llmOpinion
    this.embeddings = deps.embeddings
    this.repo = new SessionRepository(deps.db)
    this.store = new SessionStore({
      db: deps.db,
      repo: this.repo,
      clock: deps.clock,
      metrics: deps.metrics,
      engineOptions: deps.llmTimeoutMs === undefined ? {} : { llmTimeoutMs: deps.llmTimeoutMs },
      cacheMax: deps.cacheMax,
      cacheMaxBytes: deps.cacheMaxBytes,
    })
  }

  /** Drops a deleted agent's sessions from the session cache. */
  forgetAgent(agentId: string): void {
    this.store.forgetAgent(agentId)
  }

  /** A unit of work of its own, for callers outside a request (tests, scripts). */
  private own(): UnitOfWork {
    return new UnitOfWork(this.db)
  }

  /** A 409 when the agent has a session with the same `external_id` already. */
  async create(agentId: string, input: CreateSessionInput, uow: UnitOfWork = this.own()): Promise<Session> {
    let session: GoalSession
    try {
      if (input.config?.similarity === 'embeddings' && this.embeddings === undefined) throw new SessionConfigError('similarity', `'embeddings' needs an embeddings provider: ${NO_PROVIDER}`)
      if (input.config?.llm_verify === true && this.llmVerify === undefined) throw new SessionConfigError('llm_verify', 'true needs an LLM: no LLM configured (GOALKEEPER_LLM_URL)')
      if (input.config?.second_opinion !== undefined && this.llmOpinion === undefined) throw new SessionConfigError('second_opinion', 'needs an LLM: no LLM configured (GOALKEEPER_LLM_URL)')
      session = this.store.newSession({ goal: input.goal, plan: input.plan ?? [], config: input.config ?? {} })
    } catch (err) {
      if (err instanceof SessionConfigError) throw badRequest(`Invalid config: ${err.message}.`, [{ path: fieldPath('body', 'config', err.field), message: err.message }])
      throw err
    }
    if (input.parent_id !== undefined && (await this.repo.key(agentId, input.parent_id)) === undefined) {
      throw badRequest(`parent_id ${JSON.stringify(input.parent_id)} is not a session of this agent.`, [{ path: fieldPath('body', 'parent_id'), message: 'no such session' }])
    }
    const now = this.clock()
    const row = {
      id: newId('ses', now),
      agent_id: agentId,
      goal: session.goal,
      plan: JSON.stringify(session.plan),
      status: 'active' as const,
      config: JSON.stringify(session.config),
      metadata: JSON.stringify(input.metadata ?? {}),
      state: JSON.stringify(session.state()),
      version: 1,
      external_id: input.external_id ?? null,
      parent_id: input.parent_id ?? null,
      created_at: now,
      updated_at: now,
    }
    const snapshot = JSON.stringify(session.toJSON())
    return await uow.run(async () => {
      if (!(await this.repo.insert(row, snapshot))) {
        throw conflict(`A session with external_id ${JSON.stringify(input.external_id)} exists already; find it with GET /v1/sessions?external_id=.`)
      }
      return toSession(row)
    })
  }

  /** The agent's session with this external id, or undefined. */
  async byExternalId(agentId: string, externalId: string): Promise<Session | undefined> {
    const row = await this.repo.byExternalId(agentId, externalId)
    return row === undefined ? undefined : toSession(row)
  }

  async list(agentId: string, filter: SessionFilter, limit: number, cursor?: string): Promise<Page<Session>> {
    const page = pageOf(await this.repo.list(agentId, filter, limit, cursor), limit)
    return { ...page, items: page.items.map(toSession) }
  }

  /** The dashboard's list: newest first, each session with its step count, last verdict and recent similarity. */
  async overview(agentId: string, filter: SessionFilter, limit: number, cursor?: string): Promise<Page<SessionDigest>> {
    const page = pageOf(await this.repo.list(agentId, filter, limit, cursor, true), limit)
    // Concurrent: on PostgreSQL each is a round trip of its own.
    const items = await Promise.all(page.items.map(async (row) => toDigest(row, await this.repo.recentSteps(agentId, row.id, SPARKLINE_STEPS))))
    return { ...page, items }
  }

  async get(agentId: string, id: string): Promise<Session> {
    return toSession(await this.store.meta(agentId, id))
  }

  async delete(agentId: string, id: string): Promise<void> {
    const removed = await this.repo.remove(agentId, id)
    this.store.forget(id)
    if (!removed) throw notFound('session', id)
  }

  /** Archive / unarchive and replace metadata. The engine state is untouched. */
  async update(agentId: string, id: string, patch: { status?: SessionStatus; metadata?: Record<string, unknown> }): Promise<Session> {
    return await this.own().run(async () => {
      const meta = await this.store.meta(agentId, id)
      const next = {
        id,
        agent_id: agentId,
        status: patch.status ?? meta.status,
        metadata: patch.metadata === undefined ? meta.metadata : JSON.stringify(patch.metadata),
        updated_at: this.clock(),
      }
      await this.repo.writeAttrs(next)
      return toSession({ ...meta, ...next, version: meta.version + 1 })
    })
  }

  private write<T>(agentId: string, id: string, fn: (s: GoalSession) => Outcome<T>, uow: UnitOfWork = this.own()): Promise<T> {
    return this.store.mutate(uow, agentId, id, fn)
  }

  async setGoal(agentId: string, id: string, goal: string): Promise<Session> {
    await this.write(agentId, id, (s) => ({ result: s.setGoal(goal) }))
    return await this.get(agentId, id)
  }

  async setPlan(agentId: string, id: string, steps: string[]): Promise<Session> {
    await this.write(agentId, id, (s) => ({ result: s.setPlan(steps) }))
    return await this.get(agentId, id)
  }

  summary(agentId: string, id: string): Promise<SessionSummary> {
    return this.store.read(agentId, id, (s) => s.summary())
  }

  /**
   * The per-step verdict. With `config.llm_verify` and an LLM configured, the LLM is asked outside
   * any transaction, on a private copy that commits only if no other write came first; a second
   * opinion that is due (`config.second_opinion`) is asked before either (opinion-lookup.ts).
   */
  async step(agentId: string, id: string, input: StepInput, uow: UnitOfWork = this.own()): Promise<StepResult> {
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
      return this.counted(await this.write(agentId, id, (s) => stepOn(s, s.step(description, output, undefined, signals)), uow))
    }
    const meta = await this.store.meta(agentId, id)
    assertActive(meta)
    const looked = await lookUp(this.embeddings, meta, description)
    // A step with an opinion is not replayable as a journal entry (a replay asks no LLM): it takes a snapshot.
    const opinion = await prepareOpinion(this.store, this.repo, this.llmOpinion, meta, description, output)
    const llmVerify = this.llmVerify
    if (llmVerify === undefined || (JSON.parse(meta.config) as { llm_verify?: boolean }).llm_verify !== true) {
      return this.counted(await this.write(agentId, id, (s) => stepOn(s, s.step(description, output, similarityFor(s, looked), signals, opinion), looked, opinion !== undefined), uow))
    }
    // Computed while the clock ran on: not replayable as a journal entry, so it takes a snapshot.
    const verified = (copy: GoalSession) => copy.stepAsync(description, output, llmVerify, similarityFor(copy, looked), signals, opinion)
    return this.counted(await this.store.mutateCopy(uow, meta, async (copy) => stepOn(copy, await verified(copy), looked, true)))
  }

  /**
   * Read-only: the goal reminder and recitation the next `POST /v1/turns` without an iteration
   * would get (turn-parts.ts: the next step's number), before the token budget; nothing recorded.
   */
  nextTurn(agentId: string, id: string): Promise<{ iteration: number; reminder: GoalReminder; recitation: RecitationPreview }> {
    return this.store.read(agentId, id, (session) => {
      const iteration = session.stepsTaken + 1
      return { iteration, reminder: session.reminderPreview(iteration), recitation: session.recitation(iteration) }
    })
  }

  private counted(result: StepResult): StepResult {
    this.metrics.verdicts.inc({ action: result.verification.recommended_action })
    return result
  }

  async steps(agentId: string, id: string, limit: number, cursor?: string): Promise<Page<StepLogEntry>> {
    await this.store.key(agentId, id)
    const page = pageOf(await this.repo.steps(agentId, id, intCursor(cursor), limit), limit, (row) => row.step_number)
    return { ...page, items: page.items.map(toStep) }
  }

  /** A session using embeddings asks the provider first, outside the transaction. */
  async driftCheck(agentId: string, id: string, action: string, stepNumber?: number, uow: UnitOfWork = this.own()): Promise<DriftCheck> {
    let looked: LookedUp | undefined
    if (this.embeddings !== undefined) {
      const meta = await this.store.meta(agentId, id)
      // An archived session answers 409 from the write below, without asking the provider.
      if (meta.status === 'active') looked = await lookUp(this.embeddings, meta, action)
    }
    return await this.write(
      agentId,
      id,
      (s) => {
        const { result, events } = s.driftCheck(action, stepNumber, similarityFor(s, looked))
        noteFallback(result, looked)
        return { result, events, drift_events: result.event === null ? [] : [result.event] }
      },
      uow,
    )
  }

  trend(agentId: string, id: string, window: number): Promise<DriftTrend> {
    return this.store.read(agentId, id, (s) => s.trend(window))
  }

  async driftEvents(agentId: string, id: string, limit: number, cursor?: string): Promise<Page<DriftEvent>> {
    await this.store.key(agentId, id)
    const page = pageOf(await this.repo.driftEvents(agentId, id, intCursor(cursor), limit), limit, (row) => row.seq)
    return { ...page, items: page.items.map(toDriftEvent) }
  }

  resetDrift(agentId: string, id: string): Promise<GoalState> {
    return this.write(agentId, id, (s) => ({ result: s.resetDrift() }))
  }

  resetLoop(agentId: string, id: string): Promise<GoalState> {
    return this.write(agentId, id, (s) => ({ result: s.resetLoop() }))
  }

  addPitfall(agentId: string, id: string, text: string): Promise<{ pitfalls: string[] }> {
    return this.write(agentId, id, (s) => ({ result: { pitfalls: s.addPitfall(text) } }))
  }

  addTriedApproach(agentId: string, id: string, text: string): Promise<{ tried_approaches: string[] }> {
    return this.write(agentId, id, (s) => ({ result: { tried_approaches: s.addTriedApproach(text) } }))
  }

  /** Read-only: the goal reminder for turn N; nothing recorded, no write. */
  reminder(agentId: string, id: string, turn: number, overrides: ReminderOverrides): Promise<GoalReminder> {
    return this.store.read(agentId, id, (s) => s.reminderPreview(turn, overrides))
  }

  /** Builds the goal reminder for turn N and records it as shown: it counts in summary.reminders. */
  recordReminder(agentId: string, id: string, turn: number, overrides: ReminderOverrides, uow: UnitOfWork = this.own()): Promise<GoalReminder> {
    return this.write(agentId, id, (s) => ({ result: s.reminder(turn, overrides) }), uow)
  }

  setContext(agentId: string, id: string, context: RecitationContext): Promise<RecitationContext> {
    return this.write(agentId, id, (s) => ({ result: s.setContext(context) }))
  }

  recitation(agentId: string, id: string, iteration: number, contextTokens?: number): Promise<RecitationPreview> {
    return this.store.read(agentId, id, (s) => s.recitation(iteration, contextTokens))
  }

  injectRecitation<M extends ChatMessage>(agentId: string, id: string, input: { iteration: number; messages: M[]; context_tokens?: number; force?: boolean }): Promise<RecitationInjection<M>> {
    return this.write(agentId, id, (s) => ({
      result: s.injectRecitation(input.iteration, input.messages, {
        ...(input.context_tokens === undefined ? {} : { contextTokens: input.context_tokens }),
        ...(input.force === undefined ? {} : { force: input.force }),
      }),
    }))
  }

  /** A coding agent's later prompt (its hooks, its telemetry): it joins the goal, and a new turn begins. */
  userPrompt(agentId: string, id: string, prompt: string, uow: UnitOfWork = this.own()): Promise<void> {
    return this.write(agentId, id, (s) => ({ result: s.userPrompt(prompt) }), uow)
  }

  /** The tools the agent has now (PUT …/tools): a step calling another is named at once. */
  async reportTools(agentId: string, id: string, tools: string[]): Promise<{ tools: string[] }> {
    const problem = toolsProblem(tools, 'tools')
    if (problem !== null) throw badRequest(`Invalid tools: ${problem[0]} ${problem[1]}.`, [{ path: fieldPath('body', ...problem[0].split('/')), message: problem[1] }])
    return { tools: await this.write(agentId, id, (s) => ({ result: s.reportTools(tools) })) }
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
  async stop(agentId: string, id: string, maxBlocks: number): Promise<StopCheck> {
    const spent = (await this.daily.spent(agentId)) !== null
    return this.write(agentId, id, (s) => s.stop(maxBlocks, spent))
  }

  /** A coding agent's context was compacted: its next answer recites the session (`reciteAfterCompaction`). */
  compacted(agentId: string, id: string): Promise<void> {
    return this.write(agentId, id, (s) => ({ result: s.compacted() }))
  }

  /**
   * The recitation block injected now whatever its schedule, or null when there is nothing to
   * recite; with `pending`, only when a compaction is waiting for it (read first: no write otherwise).
   */
  async recite(agentId: string, id: string, pending = false): Promise<string | null> {
    if (pending && !(await this.store.read(agentId, id, (s) => s.compactedSinceRecitation))) return null
    return this.write(agentId, id, (s) => ({ result: s.reciteNow() }))
  }

  /** The goal reminder and recitation for `POST /v1/turns` (TurnPartsProvider), inside the turn's transaction. */
  turnParts(input: TurnPartsInput): Promise<SessionTurnParts> {
    return this.write(input.agentId, input.sessionId, (s) => ({ result: sessionTurnParts(s, input) }))
  }
}
