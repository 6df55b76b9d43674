/**
 * Load → engine → persist for goal sessions. A write runs in the caller's unit of work: it reads
 * (and on PostgreSQL locks) the row's key (agent, status, version), takes the hydrated session for
 * that version, runs the engine, and writes the new state checked against the version it was
 * computed from, together with the step row, drift events and outbox messages of the episode events.
 *
 * The engine state is a snapshot plus the steps after it: a step's row is its journal entry, so a
 * step writes no snapshot until SNAPSHOT_EVERY steps have piled up (every other write takes one).
 * Loading replays those steps, each at the clock reading it ran at and with the score it used, so
 * the rebuilt engine equals the one that served them. A full snapshot per step cost about half a
 * step's server time under load (docs/performance.md).
 *
 * Hydrated sessions are kept in an LRU keyed by id and labelled with their version; the row's
 * version is read on every request, so a session written by another process or replica is never
 * served stale. An engine is changed in place by a write, so a cached entry is never changed:
 * a write takes its entry out of the cache (holding the session's write lock, so this process runs
 * one write of a session at a time) and puts the new version back only once it has committed. A
 * read meanwhile misses and loads the committed state itself.
 */
import { LRUCache } from 'lru-cache'
import type { SqlDatabase } from '../db/database.js'
import type { UnitOfWork } from '../db/unit-of-work.js'
import type { Clock } from '../engine/clock.js'
import type { DriftEvent } from '../engine/goal-dna.js'
import { GoalSession, type GoalSessionJSON, type GoalSessionOptions, type SessionEvent, type StepResult } from '../engine/goal-session.js'
import { conflict, notFound } from '../errors.js'
import type { Metrics } from '../metrics.js'
import { Outbox } from '../webhooks/outbox.js'
import { SessionRepository, type SessionKey, type SessionRow } from './repository.js'
import { SessionClock } from './session-clock.js'
import { signalColumns, signalsOf, type StepInput } from './model.js'
import { KeyedLock } from './write-lock.js'

export const SESSION_CACHE_MAX = 500

/** Attempts of a write that lost its version race (each on a fresh load) before it becomes a 409. */
export const WRITE_ATTEMPTS = 3

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
  id: string
  agentId: string
  version: number
  session: GoalSession
  clock: SessionClock
  pending: number
}

export class SessionStore {
  readonly repo: SessionRepository
  private readonly db: SqlDatabase
  private readonly outbox: Outbox
  private readonly clock: Clock
  private readonly metrics: Metrics
  private readonly engineOptions: GoalSessionOptions
  /** Absent when caching is off (`cacheMax: 0`): every request loads its session. */
  private readonly cache: LRUCache<string, Hydrated> | undefined
  private readonly writing = new KeyedLock()

  constructor(opts: { db: SqlDatabase; clock: Clock; metrics: Metrics; engineOptions: GoalSessionOptions; cacheMax?: number | undefined }) {
    this.db = opts.db
    this.repo = new SessionRepository(opts.db)
    this.outbox = new Outbox(opts.db)
    this.clock = opts.clock
    this.metrics = opts.metrics
    this.engineOptions = { ...opts.engineOptions, clock: opts.clock }
    const max = opts.cacheMax ?? SESSION_CACHE_MAX
    this.cache = max > 0 ? new LRUCache<string, Hydrated>({ max }) : undefined
  }

  newSession(init: ConstructorParameters<typeof GoalSession>[0]): GoalSession {
    return new GoalSession(init, this.engineOptions)
  }

  async meta(agentId: string, id: string): Promise<SessionRow> {
    const row = await this.repo.meta(agentId, id)
    if (row === undefined) throw notFound('session', id)
    return row
  }

  async key(agentId: string, id: string): Promise<SessionKey> {
    const key = await this.repo.key(agentId, id)
    if (key === undefined) throw notFound('session', id)
    return key
  }

  /**
   * `fn` on the engine of the session's current version, which it must only read. It runs in the
   * same synchronous stretch as the cache lookup, so no write can take the engine in between.
   */
  async read<T>(agentId: string, id: string, fn: (session: GoalSession) => T): Promise<T> {
    const key = await this.key(agentId, id)
    const hit = this.hit(key)
    if (hit !== undefined) return fn(hit.session)
    const loaded = await this.load(key)
    const result = fn(loaded.session)
    this.offer(loaded)
    return result
  }

  private hit(key: SessionKey): Hydrated | undefined {
    const hit = this.cache?.get(key.id)
    return hit !== undefined && hit.version === key.version && hit.agentId === key.agent_id ? hit : undefined
  }

  /** Caches `entry` unless a newer version is cached already. */
  private offer(entry: Hydrated): void {
    const cached = this.cache?.peek(entry.id)
    if (cached === undefined || cached.version <= entry.version) this.cache?.set(entry.id, entry)
  }

  /**
   * A private copy from the stored state, labelled with the version it was read at, which may be
   * past `key` when another writer committed meanwhile. The version and snapshot come from one
   * statement and the journal is bounded by that version, so the three agree even under
   * PostgreSQL's read committed.
   */
  async load(key: SessionKey): Promise<Hydrated> {
    const read = async () => {
      const stored = await this.repo.stored(key.agent_id, key.id)
      if (stored === undefined) throw notFound('session', key.id)
      const json = JSON.parse(stored.snapshot) as GoalSessionJSON
      return { version: stored.version, json, steps: await this.repo.journalSteps(key.id, json.step_count, stored.version) }
    }
    const { version, json, steps } = this.db.inTransaction ? await read() : await this.db.transaction(read)
    const clock = new SessionClock(this.clock)
    const session = GoalSession.fromJSON(json, { ...this.engineOptions, clock: clock.clock })
    for (const s of steps) clock.at(s.at, () => session.step(s.description, s.output, s.similarity ?? undefined, signalsOf(s)))
    return { id: key.id, agentId: key.agent_id, version, session, clock, pending: steps.length }
  }

  forget(id: string): void {
    this.cache?.delete(id)
  }

  /** Drops every cached session of an agent (the agent was deleted with its sessions). */
  forgetAgent(agentId: string): void {
    for (const [id, entry] of this.cache?.entries() ?? []) if (entry.agentId === agentId) this.forget(id)
  }

  /**
   * Runs `fn` on the session and persists its outcome in `uow`; archived sessions are read-only
   * (409). A lost version race is tried again on a fresh load, WRITE_ATTEMPTS times in all.
   */
  async mutate<T>(uow: UnitOfWork, agentId: string, id: string, fn: (session: GoalSession) => Outcome<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.writeOnce(uow, id, async () => {
          const key = await this.repo.lockKey(agentId, id)
          if (key === undefined) throw notFound('session', id)
          assertActive(key)
          // Out of the cache while it changes; a hit older than the row is of no use either.
          const entry = this.hit(key) ?? (await this.load(key))
          this.forget(id)
          // One clock reading for the whole operation: the one its journal entry records.
          const now = this.clock()
          const outcome = entry.clock.at(now, () => fn(entry.session))
          return { outcome, next: await this.persist(key, entry, outcome, now) }
        })
      } catch (err) {
        if (!(err instanceof LostRace)) throw err
        if (attempt >= WRITE_ATTEMPTS) throw raceConflict()
      }
    }
  }

  /**
   * Writes `entry` (a private copy computed outside any transaction, e.g. while an LLM answered)
   * as the next version with the outcome's rows; throws LostRace when the row has moved on.
   */
  persistCopy<T>(uow: UnitOfWork, key: SessionKey, entry: Hydrated, outcome: Outcome<T>): Promise<T> {
    return this.writeOnce(uow, key.id, async () => ({ outcome, next: await this.persist(key, entry, outcome, this.clock()) }))
  }

  /**
   * Runs `work` in `uow` holding the session's write lock until the transaction has settled, then
   * caches the version it wrote. Inside a caller's transaction that commits later, nothing is cached.
   */
  private async writeOnce<T>(uow: UnitOfWork, id: string, work: () => Promise<{ outcome: Outcome<T>; next: Hydrated }>): Promise<T> {
    const nested = this.db.inTransaction
    let release: (() => void) | undefined
    let done: { outcome: Outcome<T>; next: Hydrated } | undefined
    try {
      const result = await uow.run(async () => {
        // Taken inside the transaction: its connection (or SQLite's turn) is held already.
        release = await this.writing.acquire(id)
        done = await work()
        return done.outcome.result
      })
      // Counted once written (not per attempt).
      for (const e of done!.outcome.drift_events ?? []) this.metrics.driftEvents.inc({ severity: e.severity })
      if (!nested) {
        const next = done!.next
        this.offer(next)
        // A SQLite group commit that fails takes this write with it: the cached engine is ahead then.
        uow.onRollback(() => this.forget(id))
      }
      return result
    } finally {
      release?.()
    }
  }

  /**
   * Writes `entry.session` (computed from `entry.version`) as the next version with the outcome's
   * rows and returns the entry as of that version; throws LostRace when the row has moved on. The
   * caller holds the transaction.
   */
  async persist<T>(key: SessionKey, entry: Hydrated, outcome: Outcome<T>, now: number = this.clock()): Promise<Hydrated> {
    const { session } = entry
    const journaled = outcome.step !== undefined && outcome.snapshot !== true && entry.pending + 1 < SNAPSHOT_EVERY
    const written = await this.repo.writeState({
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
      await this.repo.insertStep({
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
      await this.repo.insertDriftEvent({
        session_id: key.id,
        agent_id: key.agent_id,
        step_number: e.step_number,
        similarity: e.similarity,
        action_text: e.action_text,
        severity: e.severity,
        created_at: Date.parse(e.timestamp),
      })
    }
    for (const e of outcome.events ?? []) await this.outbox.enqueue(key.agent_id, `session.${e.type}`, { session_id: key.id, ...e.data }, now)
    return { ...entry, version, pending: journaled ? entry.pending + 1 : 0 }
  }
}
