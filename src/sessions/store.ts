/**
 * Load → engine → persist for goal sessions. A write runs in the caller's unit of work: it reads
 * the row's key (agent, status, version), takes the hydrated session for that version, runs the
 * engine, and writes the new state checked against the version it was computed from, together
 * with the step row, drift events and outbox messages of the episode events.
 *
 * The engine state is a snapshot plus the steps after it: a step's row is its journal entry, so a
 * step writes no snapshot until SNAPSHOT_EVERY steps have piled up (every other write takes one).
 * Loading replays those steps, each at the clock reading it ran at and with the score it used, so
 * the rebuilt engine equals the one that served them. A full snapshot per step cost about half a
 * step's server time under load (docs/performance.md).
 *
 * Hydrated sessions are kept in an LRU keyed by id and version: the row's version is read on every
 * request, so a session written by another process is never served stale.
 */
import { LRUCache } from 'lru-cache'
import type { UnitOfWork } from '../db/unit-of-work.js'
import type { Clock } from '../engine/clock.js'
import type { DriftEvent } from '../engine/goal-dna.js'
import { GoalSession, type GoalSessionJSON, type GoalSessionOptions, type SessionEvent, type StepResult } from '../engine/goal-session.js'
import { conflict, notFound } from '../errors.js'
import type { Metrics } from '../metrics.js'
import { Outbox } from '../webhooks/outbox.js'
import type Database from 'better-sqlite3'
import { SessionRepository, type SessionKey, type SessionRow } from './repository.js'
import { SessionClock } from './session-clock.js'
import { signalColumns, signalsOf, type StepInput } from './model.js'

export const SESSION_CACHE_MAX = 500

/** What a mutation hands back to be written with the engine state. */
export interface Outcome<T> {
  result: T
  events?: SessionEvent[]
  drift_events?: DriftEvent[]
  /** A step's input, recorded as its row of the step log (and journal entry). */
  step?: { input: StepInput; result: StepResult }
  /** Write a snapshot even for a step (one computed off the pinned clock, e.g. while an LLM answered). */
  snapshot?: boolean
}

/** The version check failed: another writer committed first. */
export class LostRace extends Error {
  constructor() {
    super('The session changed while this request was computed; retry it.')
    this.name = 'LostRace'
  }
}

/** A lost race after the retries the caller allows: 409. */
export const raceConflict = () => conflict('The session was changed concurrently; retry the request.')

export function assertActive(key: SessionKey): void {
  if (key.status === 'archived') throw conflict(`Session ${key.id} is archived; unarchive it (PATCH status: active) to change it.`)
}

/** Steps journaled between two snapshots: bounds the replay of a cache miss. */
export const SNAPSHOT_EVERY = 32

/** A hydrated session as of `version`, on its own clock, with the steps journaled since its snapshot. */
export interface Hydrated {
  agentId: string
  version: number
  session: GoalSession
  clock: SessionClock
  pending: number
}

export class SessionStore {
  readonly repo: SessionRepository
  private readonly outbox: Outbox
  private readonly sqlite: Database.Database
  private readonly clock: Clock
  private readonly metrics: Metrics
  private readonly engineOptions: GoalSessionOptions
  /** Absent when caching is off (`cacheMax: 0`): every request loads its session. */
  private readonly cache: LRUCache<string, Hydrated> | undefined

  constructor(opts: { sqlite: Database.Database; clock: Clock; metrics: Metrics; engineOptions: GoalSessionOptions; cacheMax?: number | undefined }) {
    this.sqlite = opts.sqlite
    this.repo = new SessionRepository(opts.sqlite)
    this.outbox = new Outbox(opts.sqlite)
    this.clock = opts.clock
    this.metrics = opts.metrics
    this.engineOptions = { ...opts.engineOptions, clock: opts.clock }
    const max = opts.cacheMax ?? SESSION_CACHE_MAX
    this.cache = max > 0 ? new LRUCache<string, Hydrated>({ max }) : undefined
  }

  newSession(init: ConstructorParameters<typeof GoalSession>[0]): GoalSession {
    return new GoalSession(init, this.engineOptions)
  }

  meta(agentId: string, id: string): SessionRow {
    const row = this.repo.meta(agentId, id)
    if (row === undefined) throw notFound('session', id)
    return row
  }

  key(agentId: string, id: string): SessionKey {
    const key = this.repo.key(agentId, id)
    if (key === undefined) throw notFound('session', id)
    return key
  }

  /** The engine for this row's version, for reads. */
  hydrate(key: SessionKey): GoalSession {
    return this.entry(key).session
  }

  /** The cached engine of this row's version, or one loaded from its snapshot and journal. */
  private entry(key: SessionKey): Hydrated {
    const hit = this.cache?.get(key.id)
    if (hit !== undefined && hit.version === key.version && hit.agentId === key.agent_id) return hit
    const loaded = this.load(key)
    this.cache?.set(key.id, loaded)
    return loaded
  }

  /**
   * A private copy from the stored state (for work that awaits: the cached one is never touched
   * then), labelled with the version its own reads saw, which another process may have moved past `key`.
   */
  load(key: SessionKey): Hydrated {
    const read = () => {
      const version = this.repo.key(key.agent_id, key.id)?.version
      const snap = this.repo.snapshot(key.id)
      if (version === undefined || snap === undefined) throw notFound('session', key.id)
      const json = JSON.parse(snap.snapshot) as GoalSessionJSON
      return { version, json, steps: this.repo.journalSteps(key.id, json.step_count) }
    }
    // One read transaction, so a writer on another connection cannot land between the reads.
    const { version, json, steps } = this.sqlite.inTransaction ? read() : this.sqlite.transaction(read)()
    const clock = new SessionClock(this.clock)
    const session = GoalSession.fromJSON(json, { ...this.engineOptions, clock: clock.clock })
    for (const s of steps) clock.at(s.at, () => session.step(s.description, s.output, s.similarity ?? undefined, signalsOf(s)))
    return { agentId: key.agent_id, version, session, clock, pending: steps.length }
  }

  forget(id: string): void {
    this.cache?.delete(id)
  }

  /** Drops every cached session of an agent (the agent was deleted with its sessions). */
  forgetAgent(agentId: string): void {
    for (const [id, entry] of this.cache?.entries() ?? []) if (entry.agentId === agentId) this.forget(id)
  }

  /** Runs `fn` on the session and persists its outcome in `uow`; archived sessions are read-only (409). */
  mutate<T>(uow: UnitOfWork, agentId: string, id: string, fn: (session: GoalSession) => Outcome<T>): T {
    try {
      const result = uow.run(() => {
        const key = this.key(agentId, id)
        assertActive(key)
        const entry = this.entry(key)
        // One clock reading for the whole operation: the one its journal entry records.
        const now = this.clock()
        const outcome = entry.clock.at(now, () => fn(entry.session))
        this.persist(key, entry, outcome, now)
        return outcome.result
      })
      // A group commit that fails takes this write with it: the cached engine is ahead then.
      uow.onRollback(() => this.forget(id))
      return result
    } catch (err) {
      // The cached engine may have changed before the failure: load it again next time.
      this.forget(id)
      throw err instanceof LostRace ? raceConflict() : err
    }
  }

  /**
   * Writes `entry.session` (computed from `entry.version`) as the next version with the outcome's
   * rows; throws LostRace when the row has moved on. The caller holds the transaction.
   */
  persist<T>(key: SessionKey, entry: Hydrated, outcome: Outcome<T>, now: number = this.clock()): void {
    const { session } = entry
    const journaled = outcome.step !== undefined && outcome.snapshot !== true && entry.pending + 1 < SNAPSHOT_EVERY
    const written = this.repo.writeState({
      id: key.id,
      agent_id: key.agent_id,
      version: entry.version,
      goal: session.goal,
      plan: JSON.stringify(session.plan),
      state: JSON.stringify(session.state()),
      snapshot: journaled ? undefined : JSON.stringify(session.toJSON()),
      updated_at: now,
    })
    if (!written) throw new LostRace()
    const version = entry.version + 1
    if (outcome.step !== undefined) {
      const { input, result } = outcome.step
      this.repo.insertStep({
        session_id: key.id,
        step_number: result.step_number,
        agent_id: key.agent_id,
        description: input.description,
        output: input.output ?? '',
        ...signalColumns(input),
        verification: JSON.stringify(result.verification),
        drift: JSON.stringify(result.drift),
        recommended_action: result.verification.recommended_action,
        created_at: now,
        version,
      })
    }
    for (const e of outcome.drift_events ?? []) {
      this.repo.insertDriftEvent({
        session_id: key.id,
        agent_id: key.agent_id,
        step_number: e.step_number,
        similarity: e.similarity,
        action_text: e.action_text,
        severity: e.severity,
        created_at: Date.parse(e.timestamp),
      })
      this.metrics.driftEvents.inc({ severity: e.severity })
    }
    for (const e of outcome.events ?? []) this.outbox.enqueue(key.agent_id, `session.${e.type}`, { session_id: key.id, ...e.data }, now)
    this.cache?.set(key.id, { ...entry, version, pending: journaled ? entry.pending + 1 : 0 })
  }
}
