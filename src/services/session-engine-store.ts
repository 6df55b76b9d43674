/**
 * Load → engine → persist for goal sessions. Every mutation runs in one transaction: the
 * snapshot with its version check, any step or drift-event rows, and the outbox messages of the
 * episode events. Hydrated sessions are kept in a small LRU keyed by id and checked against the
 * row's version, so a restart or another writer can never serve stale engine state.
 */
import { LRUCache } from 'lru-cache'
import type { DbHandle } from '../db/client.js'
import type { Clock } from '../engine/clock.js'
import type { DriftEvent } from '../engine/goal-dna.js'
import { GoalSession, type GoalSessionJSON, type GoalSessionOptions, type SessionEvent } from '../engine/goal-session.js'
import { conflict, notFound } from '../errors.js'
import type { Metrics } from '../metrics.js'
import { enqueue } from '../webhooks/outbox.js'
import { SessionStore, type SessionMetaRow } from './session-store.js'

export const SESSION_CACHE_MAX = 500

/** What a mutation hands back to be written with the snapshot. */
export interface MutationOutcome<T> {
  result: T
  events?: SessionEvent[]
  drift_events?: DriftEvent[]
  /** Extra rows (the step log) written inside the same transaction. */
  write?: (now: number) => void
}

export class SessionEngineStore {
  readonly store: SessionStore
  private readonly handle: DbHandle
  private readonly clock: Clock
  private readonly metrics: Metrics
  private readonly engineOptions: GoalSessionOptions
  /** Absent when caching is off (`cacheMax: 0`): every request parses the snapshot. */
  private readonly cache: LRUCache<string, { version: number; session: GoalSession }> | undefined

  constructor(handle: DbHandle, clock: Clock, metrics: Metrics, engineOptions: GoalSessionOptions, cacheMax = SESSION_CACHE_MAX) {
    this.handle = handle
    this.cache = cacheMax > 0 ? new LRUCache({ max: cacheMax }) : undefined
    this.store = new SessionStore(handle.sqlite)
    this.clock = clock
    this.metrics = metrics
    this.engineOptions = { ...engineOptions, clock }
  }

  newSession(init: ConstructorParameters<typeof GoalSession>[0]): GoalSession {
    return new GoalSession(init, this.engineOptions)
  }

  meta(agentId: string, id: string): SessionMetaRow {
    const row = this.store.q.meta.get(agentId, id)
    if (row === undefined) throw notFound('session', id)
    return row
  }

  /** The hydrated engine for this row's version: from the cache, or parsed from the snapshot. */
  hydrate(meta: SessionMetaRow): GoalSession {
    const hit = this.cache?.get(meta.id)
    if (hit !== undefined && hit.version === meta.version) return hit.session
    const session = this.fresh(meta)
    this.cache?.set(meta.id, { version: meta.version, session })
    return session
  }

  /** A private copy from the stored snapshot (for work that awaits, so the cached one is never touched). */
  fresh(meta: SessionMetaRow): GoalSession {
    const row = this.store.q.snapshot.get(meta.agent_id, meta.id)
    if (row === undefined) throw notFound('session', meta.id)
    return GoalSession.fromJSON(JSON.parse(row.snapshot) as GoalSessionJSON, this.engineOptions)
  }

  forget(id: string): void {
    this.cache?.delete(id)
  }

  /** Runs `fn` on the session and persists the result in one transaction; archived sessions are read-only. */
  mutate<T>(agentId: string, id: string, fn: (session: GoalSession, meta: SessionMetaRow) => MutationOutcome<T>): T {
    const nested = this.handle.sqlite.inTransaction
    const run = this.handle.sqlite.transaction(() => {
      const meta = this.meta(agentId, id)
      assertActive(meta)
      const session = this.hydrate(meta)
      try {
        return this.persist(meta, session, fn(session, meta))
      } catch (err) {
        this.forget(id)
        throw err instanceof LostRace ? raceConflict() : err
      }
    })
    // IMMEDIATE takes the write lock before the read, so another connection cannot slip a write in between.
    const out = nested ? run() : run.immediate()
    // Inside a caller's transaction the write may still roll back: do not trust the cached copy then.
    if (nested) this.forget(id)
    return out
  }

  /**
   * Commits work computed on a private copy (the async LLM path): lands only if the row is still
   * at `meta.version`; returns undefined when another write won the race.
   */
  commitIfUnchanged<T>(meta: SessionMetaRow, session: GoalSession, outcome: MutationOutcome<T>): { value: T } | undefined {
    try {
      return this.handle.sqlite.transaction(() => ({ value: this.persist(meta, session, outcome) })).immediate()
    } catch (err) {
      if (err instanceof LostRace) return undefined
      throw err
    }
  }

  private persist<T>(meta: SessionMetaRow, session: GoalSession, outcome: MutationOutcome<T>): T {
    const now = this.clock()
    const state = session.state()
    const res = this.store.q.writeSnapshot.run({
      id: meta.id,
      agent_id: meta.agent_id,
      version: meta.version,
      goal: session.goal,
      plan: JSON.stringify(session.plan),
      state: JSON.stringify(state),
      snapshot: JSON.stringify(session.toJSON()),
      updated_at: now,
    })
    if (res.changes !== 1) throw new LostRace()
    outcome.write?.(now)
    for (const e of outcome.drift_events ?? []) {
      this.store.q.insertDriftEvent.run({
        session_id: meta.id,
        agent_id: meta.agent_id,
        step_number: e.step_number,
        similarity: e.similarity,
        action_text: e.action_text,
        severity: e.severity,
        created_at: Date.parse(e.timestamp),
      })
    }
    for (const e of outcome.events ?? []) {
      enqueue(this.handle.sqlite, meta.agent_id, `session.${e.type}`, { session_id: meta.id, ...e.data }, now)
    }
    this.cache?.set(meta.id, { version: meta.version + 1, session })
    for (const e of outcome.drift_events ?? []) this.metrics.driftEvents.inc({ severity: e.severity })
    return outcome.result
  }
}

/** The version check failed: another writer committed first. */
export class LostRace extends Error {
  constructor() {
    super('The session changed while this request was computed; retry it.')
    this.name = 'LostRace'
  }
}

export function assertActive(meta: SessionMetaRow): void {
  if (meta.status === 'archived') throw conflict(`Session ${meta.id} is archived; unarchive it (PATCH status: active) to change it.`)
}

/** A lost race after the retries the caller allows: 409. */
export const raceConflict = () => conflict('The session was changed concurrently; retry the request.')
