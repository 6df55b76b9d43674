/**
 * Goal sessions: lifecycle, the per-step verdict, drift checks, reminders and recitation. Each
 * call loads the session (scoped by agent), runs the pure engine and persists in one transaction
 * (see session-engine-store.ts).
 */
import type { DbHandle } from '../db/client.js'
import type { Clock } from '../engine/clock.js'
import type { DriftCheck, DriftEvent, DriftTrend } from '../engine/goal-dna.js'
import type { GoalReminder } from '../engine/goal-reminder.js'
import type {
  GoalSession,
  RecitationContext,
  RecitationInjection,
  RecitationPreview,
  ReminderOverrides,
  SessionEvent,
  SessionSummary,
  StepResult,
} from '../engine/goal-session.js'
import type { GoalState } from '../engine/goal-tracker.js'
import type { LlmVerifyFn } from '../engine/llm-verify.js'
import type { ChatMessage } from '../engine/recitation.js'
import { SessionConfigError } from '../engine/session-config.js'
import { badRequest, fieldPath, notFound } from '../errors.js'
import { newId } from '../ids.js'
import type { Metrics } from '../metrics.js'
import type { GoalEmbeddings } from '../providers/embeddings.js'
import type { Page } from '../pagination.js'
import { lookUp, noteFallback, NO_PROVIDER, similarityFor, withSimilarity, type LookedUp } from './similarity-lookup.js'
import { SessionEngineStore } from './engine-store.js'
import { assertActive, raceConflict, stepOutcome, type MutationOutcome, type WithWrite } from './write.js'
import { toDriftEvent, toSession, toStep, type CreateSessionInput, type Session, type SessionStatus, type StepLogEntry } from './model.js'
import type { OpResults } from './ops.js'
import { intCursor, type SessionKey } from './repository.js'
import type { TurnPartsProvider } from '../reminders/turns.js'
import { sessionTurnParts, type SessionTurnParts, type TurnPartsInput } from './turn-parts.js'

export interface SessionsDeps {
  handle: DbHandle
  clock: Clock
  metrics: Metrics
  /** Set when GOALKEEPER_LLM_URL is configured; used by sessions with `config.llm_verify`. */
  llmVerify?: LlmVerifyFn
  llmTimeoutMs?: number
  /** Set when GOALKEEPER_EMBEDDINGS_URL is configured; used by sessions with `config.similarity: embeddings`. */
  embeddings?: GoalEmbeddings
  /** Hydrated sessions kept in memory (default 500); 0 turns the cache off. */
  cacheMax?: number
  /**
   * Write a built reminder up to this many ms later instead of before its reply (best-effort
   * reminder history, see session-engine-store.ts); 0 or absent: written before the reply.
   */
  reminderDeferMs?: number
}

export type { WithWrite } from './write.js'

/** Attempts of an LLM-verified step before a lost race becomes a 409. */
const STEP_ATTEMPTS = 3

export class SessionsService implements TurnPartsProvider {
  readonly engines: SessionEngineStore
  private readonly clock: Clock
  private readonly metrics: Metrics
  private readonly llmVerify: LlmVerifyFn | undefined
  private readonly embeddings: GoalEmbeddings | undefined

  constructor(deps: SessionsDeps) {
    this.clock = deps.clock
    this.metrics = deps.metrics
    this.llmVerify = deps.llmVerify
    this.embeddings = deps.embeddings
    this.engines = new SessionEngineStore(
      deps.handle,
      deps.clock,
      deps.metrics,
      deps.llmTimeoutMs === undefined ? {} : { llm_timeout_ms: deps.llmTimeoutMs },
      deps.cacheMax,
      undefined,
      deps.reminderDeferMs,
    )
  }

  private get q() {
    return this.engines.store.q
  }

  create(agentId: string, input: CreateSessionInput): Session {
    let session: GoalSession
    try {
      if (input.config?.similarity === 'embeddings' && this.embeddings === undefined) throw new SessionConfigError('similarity', `'embeddings' needs an embeddings provider: ${NO_PROVIDER}`)
      session = this.engines.newSession({ goal: input.goal, plan: input.plan ?? [], config: input.config ?? {} })
    } catch (err) {
      if (err instanceof SessionConfigError) throw badRequest(`Invalid config: ${err.message}.`, [{ path: fieldPath('body', 'config', err.field), message: err.message }])
      throw err
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
      created_at: now,
      updated_at: now,
    }
    this.engines.insert(row, session)
    return toSession(row)
  }

  list(agentId: string, status: SessionStatus | undefined, limit: number, cursor?: string): Page<Session> {
    const rows = this.engines.store.list(agentId, status, limit, cursor)
    const items = rows.slice(0, limit).map(toSession)
    return { items, next_cursor: rows.length > limit ? items[items.length - 1]!.id : null }
  }

  get(agentId: string, id: string): Session {
    return toSession(this.engines.meta(agentId, id))
  }

  delete(agentId: string, id: string): void {
    const res = this.q.remove.run(agentId, id)
    this.engines.forget(id)
    if (res.changes === 0) throw notFound('session', id)
  }

  /** Archive / unarchive and replace metadata. The engine state is untouched. */
  update(agentId: string, id: string, patch: { status?: SessionStatus; metadata?: Record<string, unknown> }): Session {
    const meta = this.engines.meta(agentId, id)
    const now = this.clock()
    const next = {
      id,
      agent_id: agentId,
      status: patch.status ?? meta.status,
      metadata: patch.metadata === undefined ? meta.metadata : JSON.stringify(patch.metadata),
      updated_at: now,
    }
    this.q.writeAttrs.run(next)
    this.engines.attrsWritten(id, meta.version, next.status)
    return toSession({ ...meta, ...next, version: meta.version + 1 })
  }

  private mutateSession(agentId: string, id: string, fn: (s: GoalSession) => void): Session {
    this.engines.mutate(agentId, id, (s) => ({ result: fn(s) }))
    return this.get(agentId, id)
  }

  setGoal(agentId: string, id: string, goal: string): Session {
    return this.mutateSession(agentId, id, (s) => s.setGoal(goal))
  }

  setPlan(agentId: string, id: string, steps: string[]): Session {
    return this.mutateSession(agentId, id, (s) => s.setPlan(steps))
  }

  summary(agentId: string, id: string): SessionSummary {
    return this.engines.hydrate(this.engines.meta(agentId, id)).summary()
  }

  /**
   * The per-step verdict. With `config.llm_verify` and an LLM configured, the LLM is asked outside
   * any transaction. `withWrite` runs inside the transaction that records the step (the HTTP
   * layer stores the idempotency record there, so it commits or rolls back with the step).
   */
  async step(agentId: string, id: string, input: { description: string; output?: string }, withWrite?: WithWrite<StepResult>): Promise<StepResult> {
    const output = input.output ?? ''
    const heuristic = async (looked?: LookedUp) => {
      const op = (s: GoalSession) => withSimilarity({ kind: 'step' as const, description: input.description, output }, s, looked)
      return this.counted(await this.engines.apply(agentId, id, op, (raw, m) => this.stepOutcome(m, input.description, output, raw, withWrite, looked)))
    }
    // Without an LLM or embeddings configured there is nothing to look up first: one read, inside the write.
    if (this.llmVerify === undefined && this.embeddings === undefined) return heuristic()
    const meta = this.engines.meta(agentId, id)
    assertActive(meta)
    const looked = await lookUp(this.embeddings, meta, input.description)
    if (this.llmVerify === undefined || (JSON.parse(meta.config) as { llm_verify?: boolean }).llm_verify !== true) return heuristic(looked)
    let current = meta
    for (let attempt = 0; attempt < STEP_ATTEMPTS; attempt++) {
      const copy = this.engines.fresh(current)
      const raw = await copy.stepAsync(input.description, output, this.llmVerify, similarityFor(copy, looked))
      const done = await this.engines.commitIfUnchanged(current, copy, this.stepOutcome(current, input.description, output, raw, withWrite, looked))
      if (done !== undefined) return this.counted(done.value)
      current = this.engines.meta(agentId, id)
      assertActive(current)
    }
    throw raceConflict()
  }

  private counted(result: StepResult): StepResult {
    this.metrics.verdicts.inc({ action: result.verification.recommended_action })
    return result
  }

  private stepOutcome(meta: SessionKey, description: string, output: string, raw: OpResults['step'], withWrite?: WithWrite<StepResult>, looked?: LookedUp): MutationOutcome<StepResult> {
    noteFallback(raw.drift, looked)
    return stepOutcome(this.q, meta, { description, output }, raw, withWrite)
  }

  steps(agentId: string, id: string, limit: number, cursor?: string): Page<StepLogEntry> {
    this.engines.meta(agentId, id)
    const rows = this.q.listSteps.all(id, agentId, intCursor(cursor), limit + 1)
    const items = rows.slice(0, limit).map(toStep)
    return { items, next_cursor: rows.length > limit ? String(items[items.length - 1]!.step_number) : null }
  }

  /**
   * `withWrite`: as for `step`, run inside the transaction that records the check. A session using
   * embeddings asks the provider first, outside the transaction.
   */
  async driftCheck(agentId: string, id: string, action: string, stepNumber?: number, withWrite?: WithWrite<DriftCheck>): Promise<DriftCheck> {
    let looked: LookedUp | undefined
    if (this.embeddings !== undefined) {
      const meta = this.engines.meta(agentId, id)
      // An archived session answers 409 from the write below, without asking the provider.
      if (meta.status === 'active') looked = await lookUp(this.embeddings, meta, action)
    }
    const op = (s: GoalSession) => withSimilarity({ kind: 'drift_check' as const, action, ...(stepNumber === undefined ? {} : { step_number: stepNumber }) }, s, looked)
    return this.engines.apply(agentId, id, op, ({ result, events }) => {
      noteFallback(result, looked)
      return {
        result,
        events,
        drift_events: result.event === null ? [] : [result.event],
        ...(withWrite === undefined ? {} : { write: () => withWrite(result) }),
      }
    })
  }

  trend(agentId: string, id: string, window: number): DriftTrend {
    return this.engines.hydrate(this.engines.meta(agentId, id)).trend(window)
  }

  driftEvents(agentId: string, id: string, limit: number, cursor?: string): Page<DriftEvent> {
    this.engines.meta(agentId, id)
    const rows = this.q.listDriftEvents.all(id, agentId, intCursor(cursor), limit + 1)
    const page = rows.slice(0, limit)
    return { items: page.map(toDriftEvent), next_cursor: rows.length > limit ? String(page[page.length - 1]!.seq) : null }
  }

  resetDrift(agentId: string, id: string): Promise<GoalState> {
    return this.engines.apply(agentId, id, { kind: 'reset_drift' }, (result) => ({ result }))
  }

  resetLoop(agentId: string, id: string): Promise<GoalState> {
    return this.engines.apply(agentId, id, { kind: 'reset_loop' }, (result) => ({ result }))
  }

  addPitfall(agentId: string, id: string, text: string): Promise<{ pitfalls: string[] }> {
    return this.engines.apply(agentId, id, { kind: 'pitfall', text }, (pitfalls) => ({ result: { pitfalls } }))
  }

  addTriedApproach(agentId: string, id: string, text: string): Promise<{ tried_approaches: string[] }> {
    return this.engines.apply(agentId, id, { kind: 'tried_approach', text }, (tried_approaches) => ({ result: { tried_approaches } }))
  }

  /**
   * Builds a reminder; it is recorded in the session's reminder history (summary.reminders): a
   * journal row, written before the reply or, with `reminderDeferMs`, within that many ms.
   */
  reminder(agentId: string, id: string, turn: number, overrides: ReminderOverrides): Promise<GoalReminder> {
    if (this.engines.deferMs > 0) {
      try {
        return Promise.resolve(this.engines.remind(agentId, id, turn, overrides))
      } catch (err) {
        return Promise.reject(err)
      }
    }
    return this.engines.apply(agentId, id, { kind: 'reminder', turn, overrides }, (result) => ({ result }))
  }

  setContext(agentId: string, id: string, context: RecitationContext): Promise<RecitationContext> {
    return this.engines.apply(agentId, id, { kind: 'set_context', context }, (result) => ({ result }))
  }

  recitation(agentId: string, id: string, iteration: number, contextTokens?: number): RecitationPreview {
    return this.engines.hydrate(this.engines.meta(agentId, id)).recitation(iteration, contextTokens)
  }

  injectRecitation<M extends ChatMessage>(
    agentId: string,
    id: string,
    input: { iteration: number; messages: M[]; context_tokens?: number; force?: boolean },
  ): RecitationInjection<M> {
    return this.engines.mutate(agentId, id, (s) => ({
      result: s.injectRecitation(input.iteration, input.messages, {
        ...(input.context_tokens === undefined ? {} : { context_tokens: input.context_tokens }),
        ...(input.force === undefined ? {} : { force: input.force }),
      }),
    }))
  }

  /** Writes deferred reminders now (app close, tests). */
  flushDeferred(): Promise<void> {
    return this.engines.flushDeferred()
  }

  /** The reminders engineer's TurnPartsProvider: the goal reminder and recitation for `POST /v1/turns`. */
  turnParts(input: TurnPartsInput): SessionTurnParts {
    return this.engines.mutate(input.agentId, input.sessionId, (s) => ({ result: sessionTurnParts(s, input) }))
  }
}
