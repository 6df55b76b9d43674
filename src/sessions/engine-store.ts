/**
 * Load → engine → persist for goal sessions. Every mutation runs in one transaction: the small
 * meta row with its version check, any step or drift-event rows, the outbox messages of the
 * episode events, and the engine state: a journal row for a journaled op (session-ops.ts), or a
 * full snapshot for any other op and every SNAPSHOT_EVERY ops, so a session is never more than
 * that many ops of replay away (the write itself is session-write.ts). Hydrated sessions are kept
 * in an LRU keyed by id; a cached session answers for its own row (agent, status, version) until
 * another connection writes to the database (external-writes.ts), and every write still checks
 * the version, so a restart or another writer can never serve or extend stale engine state. A
 * session evicted with journaled ops is snapshotted then, so a cache miss rarely replays.
 *
 * Reminders (`remind`) are the one best-effort write: built on the cached session and kept in
 * memory, they are journaled (one row for all of a session's pending ones) with the session's
 * next write, when it leaves the cache, at close, or `deferMs` later, whichever comes first.
 * A crash loses at most that window of reminder history (summary.reminders counts); nothing
 * else a later response reports depends on it.
 */
import { LRUCache } from 'lru-cache'
import type { DbHandle } from '../db/client.js'
import { groupCommitOf, type GroupCommit } from '../db/group-commit.js'
import type { Clock } from '../engine/clock.js'
import { GoalSession, type GoalSessionJSON, type GoalSessionOptions } from '../engine/goal-session.js'
import { notFound } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { GoalReminder } from '../engine/goal-reminder.js'
import type { ReminderOverrides } from '../engine/session-types.js'
import { applyOp, journaled, journalOrder, replayOp, SessionClock, type DeferredReminder, type OpOf, type OpResults, type SessionOp } from './ops.js'
import { DeferredReminders, writeDeferred } from './goal-reminder-history.js'
import { ExternalWrites } from './external-writes.js'
import { assertActive, LostRace, raceConflict, writeOutcome, writeSnapshot, type MutationOutcome, type SessionWriter } from './write.js'
import { SessionStore, type SessionKey, type SessionMetaRow } from './repository.js'

export const SESSION_CACHE_MAX = 500
/** Journaled ops between two snapshots: bounds the replay of a cache miss. */
export const SNAPSHOT_EVERY = 32

type Transaction = (<T>(fn: () => T) => T) & { immediate: <T>(fn: () => T) => T }

/** A hydrated session as of `version`, with its clock and the journal rows after its snapshot. */
interface Entry {
  version: number
  /** The rest of the session's key, trusted while `keyEpoch` is current (external-writes.ts). */
  agentId: string
  status: SessionKey['status']
  keyEpoch: number
  session: GoalSession
  clock: SessionClock
  pending: number
  /** Reminders applied to `session` but not written yet (best-effort, see above). */
  deferred?: DeferredReminder[] | undefined
}

export class SessionEngineStore {
  readonly store: SessionStore
  private readonly handle: DbHandle
  private readonly clock: Clock
  private readonly engineOptions: GoalSessionOptions
  private readonly writer: SessionWriter
  /** Absent when caching is off (`cacheMax: 0`): every request loads the session. */
  private readonly cache: LRUCache<string, Entry> | undefined
  /** The clock each private copy (`fresh`) runs on, so committing it can cache it whole. */
  private readonly clocks = new WeakMap<GoalSession, SessionClock>()
  private readonly group: GroupCommit
  /** `tx(fn)` runs fn in a transaction (a savepoint when nested); built once, see group-commit.ts. */
  private readonly tx: Transaction
  /** Sessions holding deferred reminders; `deferMs` 0: reminders are written before their reply. */
  private readonly deferred: DeferredReminders
  private readonly external: ExternalWrites

  constructor(
    handle: DbHandle, clock: Clock, metrics: Metrics, engineOptions: GoalSessionOptions,
    cacheMax = SESSION_CACHE_MAX, snapshotEvery = SNAPSHOT_EVERY, deferMs = 0,
  ) {
    this.handle = handle
    this.deferred = new DeferredReminders(cacheMax > 0 ? deferMs : 0, (ids) => this.writeDeferredOf(ids))
    this.cache = cacheMax > 0
      ? new LRUCache<string, Entry>({ max: cacheMax, dispose: (e, id, reason) => { if (reason === 'evict') this.evicted(id, e) } })
      : undefined
    this.store = new SessionStore(handle.sqlite)
    this.external = new ExternalWrites(handle.sqlite)
    this.group = groupCommitOf(handle.sqlite)
    this.tx = handle.sqlite.transaction((fn: () => unknown) => fn()) as Transaction
    this.clock = clock
    this.engineOptions = { ...engineOptions, clock }
    const store = this.store
    // `q` stays lazy: the service is built before /readyz may find an unmigrated database.
    this.writer = { get q() { return store.q }, db: handle.sqlite, metrics, snapshotEvery: Math.max(1, snapshotEvery) }
  }

  newSession(init: ConstructorParameters<typeof GoalSession>[0]): GoalSession {
    return new GoalSession(init, this.engineOptions)
  }

  /** Inserts a new session's row and its first snapshot. */
  insert(row: SessionMetaRow, session: GoalSession): void {
    this.tx(() => {
      this.store.q.insert.run(row)
      this.store.q.putSnapshot.run(row.id, row.version, JSON.stringify(session.toJSON()))
    })
  }

  meta(agentId: string, id: string): SessionMetaRow {
    const row = this.store.q.meta.get(agentId, id)
    if (row === undefined) throw notFound('session', id)
    return row
  }

  /** The hydrated engine for this row's version: from the cache, or loaded from snapshot + journal. */
  hydrate(meta: SessionKey): GoalSession {
    return this.entry(meta).session
  }

  /** The session's key: from its cached entry while no other connection has written, else its row. */
  private key(agentId: string, id: string): SessionKey {
    const hit = this.cache?.peek(id)
    if (hit !== undefined && hit.agentId === agentId && hit.keyEpoch === this.external.current()) {
      return { id, agent_id: agentId, status: hit.status, version: hit.version }
    }
    const meta = this.store.q.key.get(agentId, id)
    if (meta === undefined) throw notFound('session', id)
    return meta
  }

  private entry(meta: SessionKey): Entry {
    const hit = this.cache?.get(meta.id)
    if (hit !== undefined && hit.version === meta.version) {
      hit.status = meta.status
      hit.keyEpoch = this.external.current()
      return hit
    }
    const entry = this.load(meta)
    this.cache?.set(meta.id, entry)
    return entry
  }

  /** A private copy from the stored state (for work that awaits, so the cached one is never touched). */
  fresh(meta: SessionKey): GoalSession {
    const entry = this.load(meta)
    // The cached copy may hold reminders not written yet: the private copy starts from them too.
    const hit = this.cache?.get(meta.id)
    if (hit?.version === meta.version) for (const r of hit.deferred ?? []) entry.clock.at(r.at, () => entry.session.reminder(r.turn, r.overrides))
    this.clocks.set(entry.session, entry.clock)
    return entry.session
  }

  /** Snapshot plus the journal after it, each op replayed at the clock reading it ran at. */
  private load(meta: SessionKey): Entry {
    const keyEpoch = this.external.current()
    const read = () => {
      const snap = this.store.q.snapshot.get(meta.id)
      if (snap === undefined) throw notFound('session', meta.id)
      const json = JSON.parse(snap.snapshot) as GoalSessionJSON
      const ops = this.store.q.ops.all(meta.id, snap.version)
      const steps = this.store.q.journalSteps.all(meta.id, json.step_count, snap.version)
      return { snap, json, ops, steps }
    }
    // One read transaction, so a writer on another connection cannot land between the two reads.
    const { json, ops, steps } = this.handle.sqlite.inTransaction ? read() : this.tx(read)
    const clock = new SessionClock(this.clock)
    const session = GoalSession.fromJSON(json, { ...this.engineOptions, clock: clock.clock })
    const entries = journalOrder(ops, steps)
    for (const e of entries) replayOp(session, clock, e.at, e.op)
    return { version: meta.version, agentId: meta.agent_id, status: meta.status, keyEpoch, session, clock, pending: entries.length }
  }

  forget(id: string): void {
    this.cache?.delete(id)
    this.deferred.forget(id)
  }

  /** The row moved from `version` to the next with new attributes only (status, metadata): the engine state still holds. */
  attrsWritten(id: string, version: number, status: SessionKey['status']): void {
    const hit = this.cache?.peek(id)
    if (hit === undefined) return
    if (hit.version !== version) return this.forget(id)
    hit.version = version + 1
    hit.status = status
    // Inside an open batch the write may still roll back with it.
    this.group.onRollback(() => this.forget(id))
  }

  /** Drops every cached session of an agent (the agent was deleted with its sessions). */
  forgetAgent(agentId: string): void {
    for (const [id, entry] of this.cache?.entries() ?? []) if (entry.agentId === agentId) this.forget(id)
  }

  get deferMs(): number {
    return this.deferred.deferMs
  }

  /**
   * Builds a reminder on the cached session without writing it (when `deferMs` > 0): recorded in
   * memory and journaled later (see the top of this file). Archived sessions are read-only.
   */
  remind(agentId: string, id: string, turn: number, overrides: ReminderOverrides): GoalReminder {
    const meta = this.key(agentId, id)
    assertActive(meta)
    const entry = this.entry(meta)
    const at = this.clock()
    const result = entry.clock.at(at, () => entry.session.reminder(turn, overrides))
    ;(entry.deferred ??= []).push({ at, turn, overrides: { ...overrides } })
    this.deferred.mark(id)
    return result
  }

  /** Writes every session's deferred reminders now (the timer, close, tests), group-committed. */
  flushDeferred(): Promise<void> {
    return this.deferred.flush()
  }

  private writeDeferredOf(ids: string[]): Promise<void> {
    const work = () => {
      for (const id of ids) {
        const entry = this.cache?.peek(id)
        if (entry !== undefined) writeDeferred(this.store.q, id, entry)
      }
    }
    // Best-effort by design: a failed batch only loses these reminders' history entries.
    return this.group.run(work, () => ids.forEach((id) => this.forget(id))).catch(() => undefined)
  }

  /**
   * Runs `fn` on the session and persists the result in one transaction; archived sessions are
   * read-only. Inside an open group-commit batch it is one more savepoint of that batch.
   */
  mutate<T>(agentId: string, id: string, fn: (session: GoalSession, meta: SessionKey) => MutationOutcome<T>): T {
    const db = this.handle.sqlite
    if (this.group.open) {
      const value = this.tx(() => this.mutateIn(agentId, id, fn))
      this.group.onRollback(() => this.forget(id))
      return value
    }
    const nested = db.inTransaction
    const work = () => this.mutateIn(agentId, id, fn)
    // IMMEDIATE takes the write lock before the read, so another connection cannot slip a write in between.
    const out = nested ? this.tx(work) : this.tx.immediate(work)
    // Inside a caller's transaction the write may still roll back: do not trust the cached copy then.
    if (nested) this.forget(id)
    return out
  }

  /** Like `mutate`, group-committed with the other writes of this event-loop turn: resolves after the COMMIT. */
  mutateGrouped<T>(agentId: string, id: string, fn: (session: GoalSession, meta: SessionKey) => MutationOutcome<T>): Promise<T> {
    if (!this.group.open && this.handle.sqlite.inTransaction) return Promise.resolve(this.mutate(agentId, id, fn))
    return this.group.run(() => this.mutateIn(agentId, id, fn), () => this.forget(id))
  }

  private mutateIn<T>(agentId: string, id: string, fn: (session: GoalSession, meta: SessionKey) => MutationOutcome<T>): T {
    const meta = this.key(agentId, id)
    assertActive(meta)
    const entry = this.entry(meta)
    const now = this.clock()
    try {
      return this.persist(meta, entry, entry.clock.at(now, () => fn(entry.session, meta)), now)
    } catch (err) {
      this.forget(id)
      throw err instanceof LostRace ? raceConflict() : err
    }
  }

  /**
   * Applies a journaled op (see session-ops.ts), group-committed, and persists what `finish` makes
   * of its result. `op` may be built from the loaded session (e.g. only if its goal is unchanged).
   */
  apply<K extends SessionOp['kind'], T>(
    agentId: string, id: string, op: OpOf<K> | ((s: GoalSession) => OpOf<K>), finish: (result: OpResults[K], meta: SessionKey) => MutationOutcome<T>,
  ): Promise<T> {
    return this.mutateGrouped(agentId, id, (s, meta) => {
      const o = typeof op === 'function' ? op(s) : op
      const result = applyOp(s, o)
      return { ...finish(result, meta), op: journaled(o, result) }
    })
  }

  /**
   * Commits work computed on a private copy (the async LLM path, always a snapshot): lands only if
   * the row is still at `meta.version`; returns undefined when another write won the race.
   */
  async commitIfUnchanged<T>(meta: SessionKey, session: GoalSession, outcome: MutationOutcome<T>): Promise<{ value: T } | undefined> {
    const clock = this.clocks.get(session) ?? new SessionClock(this.clock)
    const entry: Entry = { version: meta.version, agentId: meta.agent_id, status: meta.status, keyEpoch: this.external.current(), session, clock, pending: 0 }
    try {
      return await this.group.run(() => ({ value: this.persist(meta, entry, { ...outcome, op: undefined }, this.clock()) }), () => this.forget(meta.id))
    } catch (err) {
      if (err instanceof LostRace) return undefined
      throw err
    }
  }

  private persist<T>(meta: SessionKey, entry: Entry, outcome: MutationOutcome<T>, now: number): T {
    const { version, pending } = writeOutcome(this.writer, meta, entry, outcome, now)
    this.cache?.set(meta.id, { ...entry, version, pending })
    return outcome.result
  }

  /**
   * A session leaving the cache with journaled ops is snapshotted, so its next load does not
   * replay them. Only if the row is still at the cached version (no other writer moved it on),
   * inside the caller's transaction when there is one (rolling back with it is harmless: the
   * journal still holds every op). A failure is dropped for the same reason.
   */
  private evicted(id: string, entry: Entry): void {
    if (entry.pending === 0 && !entry.deferred?.length) return
    this.deferred.forget(id)
    try {
      this.tx(() => {
        writeDeferred(this.store.q, id, entry)
        if (this.store.q.versionOf.get(id)?.version === entry.version) writeSnapshot(this.store.q, id, entry.version, entry.session)
      })
    } catch {
      // See above: the journal keeps the session whole.
    }
  }
}
