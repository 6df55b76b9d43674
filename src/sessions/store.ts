/**
 * Load → engine → persist for goal sessions. A write runs in the caller's unit of work and writes
 * the new state checked against the version it was computed from (archiving or deleting the
 * session changes that too), together with the step row, drift events and outbox messages of the episode events.
 *
 * The engine state is a snapshot plus the steps after it: a step's row is its journal entry, so a
 * step writes no snapshot until SNAPSHOT_EVERY steps have piled up (every other write takes one).
 * Loading replays those steps, each at the clock reading it ran at and with the score it used, so
 * the rebuilt engine equals the one that served them. A full snapshot per step cost about half a
 * step's server time under load (docs/performance.md).
 *
 * Hydrated sessions are kept in an LRU keyed by id and labelled with their version. A read checks
 * the row's version first, so a session written by another process or replica is never served
 * stale. A write on a cached session reads nothing first: the version check of its update is the
 * check, and a miss (another writer came first, archived or deleted it) tries again the long way,
 * reading (on PostgreSQL locking) the row's key and loading that version when the cache is behind.
 * An engine is changed in place by a write, so a cached entry is never changed: a write takes its
 * entry out of the cache (holding the session's write lock, so this process runs one write of a
 * session at a time) and puts the new version back only once it has committed. A read meanwhile
 * misses and loads the committed state itself.
 *
 * Every write is one of these, retried by one loop (`retrying`) on a lost version race:
 *
 *   call                 runs the engine on                        written (persist decides)
 *   mutate, 1st attempt  the cached engine, if any, under the lock  a step: its journal row, one statement
 *                                                                   when it has no events; else a snapshot
 *   mutate, later        the version read with the key, in the tx   the same
 *   mutateCopy           a private copy, outside tx and lock        a snapshot (its clock ran on meanwhile)
 *
 * Inside a caller's open transaction neither takes the lock nor the cache: the version check
 * alone keeps the write right, and nothing is cached until that transaction commits.
 */
import { getHeapStatistics } from 'node:v8'
import { LRUCache } from 'lru-cache'
import type { SqlDatabase } from '../db/database.js'
import type { UnitOfWork } from '../db/unit-of-work.js'
import type { Clock } from '../engine/clock.js'
import { GoalSession, type GoalSessionJSON, type GoalSessionOptions } from '../engine/session/goal-session.js'
import { notFound } from '../errors.js'
import type { Metrics } from '../metrics.js'
import { Outbox } from '../webhooks/outbox.js'
import { signalsOf } from './model.js'
import { LostRace, raceConflict, assertActive, rowsOf, type Outcome } from './outcome.js'
import type { SessionKey, SessionRepository, SessionRow } from './repository.js'
import { SessionClock } from './session-clock.js'
import { KeyedLock } from './write-lock.js'

/**
 * Hydrated sessions kept: more than a fleet of agents stepping at once, so round-robin over them
 * never misses (a miss reloads and replays the session, ~3× a step's cost). A session holds ~20 KB
 * of heap after 100 steps, ~35 KB at most with its bounded histories.
 */
const SESSION_CACHE_MAX = 2000

/**
 * The heap the cache may hold besides its count, as a share of V8's heap limit: sessions differ
 * by 50× (a 100-step session ~33 KB, the largest the schemas take ~1.6 MB), so a count alone let
 * a few hundred large ones fill a 192 MB heap.
 */
const SESSION_CACHE_HEAP_SHARE = 0.25

/**
 * A cached session's heap, estimated from its last snapshot's characters: measured 4.1× them for a
 * 100-step session (7.9 K characters), 1.6× for the largest (1 M characters).
 */
export function sessionHeapEstimate(snapshotChars: number): number {
  return 16 * 1024 + 2 * snapshotChars
}

/** Attempts of a write that lost its version race (each on a fresh load) before it becomes a 409. */
export const WRITE_ATTEMPTS = 3

/** Steps journaled between two snapshots: bounds the replay of a cache miss. */
export const SNAPSHOT_EVERY = 32

/** A hydrated session as of `version`, on its own clock, with the steps journaled since its snapshot. */
export interface Hydrated {
  id: string
  agentId: string
  /** Set at creation and never changed: the session events name it. */
  externalId: string | null
  version: number
  session: GoalSession
  clock: SessionClock
  pending: number
  /** Characters of the snapshot it was loaded from or last wrote: what its heap is estimated from. */
  snapshotChars: number
}

export class SessionStore {
  private readonly repo: SessionRepository
  private readonly db: SqlDatabase
  private readonly outbox: Outbox
  private readonly clock: Clock
  private readonly metrics: Metrics
  private readonly engineOptions: GoalSessionOptions
  /** Absent when caching is off (`cacheMax: 0`): every request loads its session. */
  private readonly cache: LRUCache<string, Hydrated> | undefined
  private readonly writing = new KeyedLock()

  constructor(opts: {
    db: SqlDatabase
    repo: SessionRepository
    clock: Clock
    metrics: Metrics
    engineOptions: GoalSessionOptions
    cacheMax?: number | undefined
    /** Estimated heap of the cached sessions at most (default: a share of the heap limit). */
    cacheMaxBytes?: number | undefined
  }) {
    this.db = opts.db
    this.repo = opts.repo
    this.outbox = new Outbox(opts.db)
    this.clock = opts.clock
    this.metrics = opts.metrics
    this.engineOptions = { ...opts.engineOptions, clock: opts.clock }
    const max = opts.cacheMax ?? SESSION_CACHE_MAX
    const maxSize = Math.round(opts.cacheMaxBytes ?? getHeapStatistics().heap_size_limit * SESSION_CACHE_HEAP_SHARE)
    this.cache = max > 0 ? new LRUCache<string, Hydrated>({ max, maxSize, sizeCalculation: (entry) => sessionHeapEstimate(entry.snapshotChars) }) : undefined
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
    // Never an archived one: a write on a cached entry trusts its version alone to be writable.
    if (key.status === 'active') this.offer(loaded)
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
      return { ...stored, json, steps: await this.repo.journalSteps(key.id, json.step_count, stored.version) }
    }
    const { version, external_id, json, snapshot, steps } = this.db.inTransaction ? await read() : await this.db.transaction(read)
    const clock = new SessionClock(this.clock)
    const session = GoalSession.fromJSON(json, { ...this.engineOptions, clock: clock.clock })
    for (const s of steps) clock.at(s.at, () => session.step(s.description, s.output, s.similarity ?? undefined, signalsOf(s)))
    return { id: key.id, agentId: key.agent_id, externalId: external_id, version, session, clock, pending: steps.length, snapshotChars: snapshot.length }
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
   * (409). The first attempt takes the cached engine, if any, and writes it without reading the
   * key: the update checks the cached version itself. Every other attempt reads (on PostgreSQL
   * locks) the key in the transaction and computes on that version.
   */
  mutate<T>(uow: UnitOfWork, agentId: string, id: string, fn: (session: GoalSession) => Outcome<T>): Promise<T> {
    return this.locked(id, () =>
      this.retrying((attempt) => {
        const cached = attempt === 1 && !this.db.inTransaction ? this.take(agentId, id) : undefined
        if (cached !== undefined) {
          const now = this.clock()
          const outcome = cached.clock.at(now, () => fn(cached.session))
          // A journaled step with no events to report is atomic on its own: one statement on PostgreSQL.
          const atomic = this.stepWrite(cached, outcome) && (outcome.events ?? []).length === 0 && outcome.inTransaction === undefined
          return this.writeIn(uow, async () => ({ outcome, next: await this.persist({ id, agent_id: agentId }, cached, outcome, now) }), atomic)
        }
        return this.writeIn(uow, async () => {
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
      }),
    )
  }

  /**
   * Runs `fn`, which may wait (an LLM's answer), on a private copy of the session outside any
   * transaction and lock, and writes the result as a snapshot if the row is still at the version
   * the copy was loaded at; otherwise it runs again on a fresh copy.
   */
  mutateCopy<T>(uow: UnitOfWork, key: SessionKey, fn: (session: GoalSession) => Promise<Outcome<T>>): Promise<T> {
    let current = key
    return this.retrying(async (attempt) => {
      if (attempt > 1) {
        current = await this.key(key.agent_id, key.id)
        assertActive(current)
      }
      const copy = await this.load(current)
      const outcome = await fn(copy.session)
      return this.locked(key.id, () => this.writeIn(uow, async () => ({ outcome, next: await this.persist(current, copy, outcome, this.clock()) })))
    })
  }

  /** The one retry loop: an attempt that lost its version race runs again, WRITE_ATTEMPTS in all, then 409. */
  private async retrying<T>(attempt: (n: number) => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        return await attempt(n)
      } catch (err) {
        if (!(err instanceof LostRace)) throw err
        if (n >= WRITE_ATTEMPTS) throw raceConflict()
      }
    }
  }

  /** The agent's cached session, out of the cache: the write owns it until it offers the next version back. */
  private take(agentId: string, id: string): Hydrated | undefined {
    const entry = this.cache?.get(id)
    if (entry === undefined || entry.agentId !== agentId) return undefined
    this.forget(id)
    return entry
  }

  /**
   * One write of a session at a time in this process, so a second one finds the first's version
   * cached instead of loading (and losing the race). Taken before the transaction, never inside
   * one: a holder may wait for a connection (or SQLite's turn), so no one holding either may wait
   * for it. A write inside a caller's transaction takes no lock; the version check keeps it right.
   */
  private async locked<T>(id: string, work: () => Promise<T>): Promise<T> {
    if (this.db.inTransaction) return work()
    const release = await this.writing.acquire(id)
    try {
      return await work()
    } finally {
      release()
    }
  }

  /**
   * Runs `work` in `uow` (`atomic`: see UnitOfWork.run) and caches the version it wrote; inside a
   * caller's transaction, which commits later, nothing is cached.
   */
  private async writeIn<T>(uow: UnitOfWork, work: () => Promise<{ outcome: Outcome<T>; next: Hydrated }>, atomic = false): Promise<T> {
    const nested = this.db.inTransaction
    let done!: { outcome: Outcome<T>; next: Hydrated }
    // The run's value is the reply an idempotency record keeps.
    const result = await uow.run(
      async () => {
        done = await work()
        return done.outcome.result
      },
      { atomic },
    )
    // Counted once written (not per attempt).
    for (const e of done.outcome.drift_events ?? []) this.metrics.driftEvents.inc({ severity: e.severity })
    if (!nested) {
      this.offer(done.next)
      // A SQLite group commit that fails takes this write with it: the cached engine is ahead then.
      uow.onRollback(() => this.forget(done.next.id))
    }
    return result
  }

  /** Whether the outcome is written as a journal entry (no snapshot). */
  private journaled(entry: Hydrated, outcome: Outcome<unknown>): boolean {
    return outcome.step !== undefined && outcome.snapshot !== true && entry.pending + 1 < SNAPSHOT_EVERY
  }

  /** A journaled step is written by the repository's writeStep (state, step row and drift event as one). */
  private stepWrite(entry: Hydrated, outcome: Outcome<unknown>): boolean {
    return this.journaled(entry, outcome) && (outcome.drift_events ?? []).length <= 1
  }

  /**
   * Writes `entry.session` (computed from `entry.version`) as the next version with the outcome's
   * rows and returns the entry as of that version; throws LostRace when the row has moved on. The
   * caller holds the transaction.
   */
  async persist<T>(key: Pick<SessionKey, 'id' | 'agent_id'>, entry: Hydrated, outcome: Outcome<T>, now: number = this.clock()): Promise<Hydrated> {
    if (outcome.inTransaction !== undefined) await outcome.inTransaction()
    const journaled = this.journaled(entry, outcome)
    const version = entry.version + 1
    const { state, step, drift } = rowsOf({ id: key.id, agent_id: key.agent_id, version: entry.version }, entry.session, outcome, journaled, now)
    if (step !== undefined && this.stepWrite(entry, outcome)) {
      if (!(await this.repo.writeStep(state, step, drift[0]))) throw new LostRace()
    } else {
      if (!(await this.repo.writeState(state))) throw new LostRace()
      if (step !== undefined) await this.repo.insertStep(step)
      for (const row of drift) await this.repo.insertDriftEvent(row)
    }
    for (const e of outcome.events ?? []) await this.outbox.enqueue(key.agent_id, `session.${e.type}`, { session_id: key.id, external_id: entry.externalId, ...e.data }, now)
    for (const [type, data] of outcome.agent_events ?? []) await this.outbox.enqueue(key.agent_id, type, data, now)
    return { ...entry, version, pending: journaled ? entry.pending + 1 : 0, snapshotChars: state.snapshot?.length ?? entry.snapshotChars }
  }
}
