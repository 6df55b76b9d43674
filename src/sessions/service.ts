/**
 * Goal sessions: lifecycle, goal and plan, the step and drift logs, reminders and recitation, a
 * coding agent's turns; the verdicts that read more than the session (a step's, the drift check, a
 * tool call's gate, a stop) are verdicts.ts. Each write loads the session (scoped by agent), runs the
 * pure engine and persists in the caller's unit of work (store.ts); reads use the cached engine of
 * the row's current version.
 */
import type { SqlDatabase } from '../db/database.js'
import { UnitOfWork } from '../db/unit-of-work.js'
import type { Clock } from '../engine/clock.js'
import type { DriftCheck, DriftEvent, DriftTrend } from '../engine/drift/goal-dna.js'
import type { GoalReminder } from '../engine/context/goal-reminder.js'
import type { GoalSession, RecitationContext, RecitationInjection, RecitationPreview, ReminderOverrides, SessionSummary, StepResult } from '../engine/session/goal-session.js'
import type { GoalState } from '../engine/session/goal-tracker.js'
import type { LlmVerifyFn } from '../engine/session/llm-verify.js'
import type { ChatMessage } from '../engine/context/recitation.js'
import type { StopCheck } from '../engine/session/agent-turn.js'
import type { StepTool } from '../engine/detection/loop-kinds.js'
import { SessionConfigError } from '../engine/session/session-config.js'
import { toolsProblem } from '../engine/detection/detection-config.js'
import { AgentDays } from './agent-days.js'
import { badRequest, conflict, fieldPath, notFound } from '../errors.js'
import { newId } from '../ids.js'
import type { Metrics } from '../metrics.js'
import { intCursor, pageOf, type Page } from '../pagination.js'
import type { GoalEmbeddings } from '../providers/embeddings.js'
import type { TurnPartsProvider } from '../reminders/turns.js'
import {
  newSessionRow,
  SPARKLINE_STEPS,
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
import { SessionRepository, type SessionFilter } from './repository.js'
import type { Outcome } from './outcome.js'
import { SessionVerdicts } from './verdicts.js'
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
  private readonly verdicts: SessionVerdicts
  private readonly db: SqlDatabase
  private readonly clock: Clock

  constructor(deps: SessionsDeps) {
    this.db = deps.db
    this.clock = deps.clock
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
    const { clock, metrics, llmVerify, llmOpinion, embeddings } = deps
    this.verdicts = new SessionVerdicts({ store: this.store, repo: this.repo, daily: new AgentDays(deps.db, clock), clock, metrics, llmVerify, llmOpinion, embeddings })
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
      this.verdicts.checkProviders(input.config)
      session = this.store.newSession({ goal: input.goal, plan: input.plan ?? [], config: input.config ?? {} })
    } catch (err) {
      if (err instanceof SessionConfigError) throw badRequest(`Invalid config: ${err.message}.`, [{ path: fieldPath('body', 'config', err.field), message: err.message }])
      throw err
    }
    if (input.parent_id !== undefined && (await this.repo.key(agentId, input.parent_id)) === undefined) {
      throw badRequest(`parent_id ${JSON.stringify(input.parent_id)} is not a session of this agent.`, [{ path: fieldPath('body', 'parent_id'), message: 'no such session' }])
    }
    const now = this.clock()
    const row = newSessionRow(newId('ses', now), agentId, session, input, now)
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

  /** The per-step verdict, providers asked first (verdicts.ts). */
  step(agentId: string, id: string, input: StepInput, uow: UnitOfWork = this.own()): Promise<StepResult> {
    return this.verdicts.step(agentId, id, input, uow)
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

  async steps(agentId: string, id: string, limit: number, cursor?: string): Promise<Page<StepLogEntry>> {
    await this.store.key(agentId, id)
    const page = pageOf(await this.repo.steps(agentId, id, intCursor(cursor), limit), limit, (row) => row.step_number)
    return { ...page, items: page.items.map(toStep) }
  }

  /** A session using embeddings asks the provider first, outside the transaction (verdicts.ts). */
  driftCheck(agentId: string, id: string, action: string, stepNumber?: number, uow: UnitOfWork = this.own()): Promise<DriftCheck> {
    return this.verdicts.driftCheck(agentId, id, action, stepNumber, uow)
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

  /** Read-only: why a coding agent should not make this tool call now, or null (verdicts.ts). */
  gateTool(agentId: string, id: string, tool: StepTool): Promise<string | null> {
    return this.verdicts.gateTool(agentId, id, tool)
  }

  /** A coding agent wants to stop: whether to ask it to carry on with open plan items (verdicts.ts). */
  stop(agentId: string, id: string, maxBlocks: number): Promise<StopCheck> {
    return this.verdicts.stop(agentId, id, maxBlocks, this.own())
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
