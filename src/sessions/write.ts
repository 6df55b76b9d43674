/**
 * The write of one session mutation, inside the caller's transaction: the meta row with its
 * version check, the journal row or a full snapshot (session-ops.ts), the step and drift-event
 * rows, and the outbox messages of the episode events.
 */
import type Database from 'better-sqlite3'
import type { DriftEvent } from '../engine/goal-dna.js'
import type { GoalSession, SessionEvent, StepResult } from '../engine/goal-session.js'
import { conflict } from '../errors.js'
import type { Metrics } from '../metrics.js'
import { enqueue } from '../webhooks/outbox.js'
import type { DeferredReminder, SessionOp } from './ops.js'
import type { SessionKey, SessionStatements } from './repository.js'

/** What a mutation hands back to be written with the engine state. */
export interface MutationOutcome<T> {
  result: T
  events?: SessionEvent[]
  drift_events?: DriftEvent[]
  /** Extra rows (the step log) written inside the same transaction, at the version the write produces. */
  write?: (now: number, version: number) => void
  /** The op the mutation applied with `applyOp`, journaled instead of a snapshot; absent: snapshot. */
  op?: SessionOp
}

/** Called with a mutation's result inside the transaction that writes it. */
export type WithWrite<T> = (result: T) => void

/** A step's outcome: its events, its drift event and its row (the step's journal entry), written at the version the write produces. */
export function stepOutcome(
  q: SessionStatements,
  meta: SessionKey,
  input: { description: string; output: string },
  raw: StepResult & { events: SessionEvent[] },
  withWrite?: WithWrite<StepResult>,
): MutationOutcome<StepResult> {
  const { events, ...result } = raw
  return {
    result,
    events,
    drift_events: result.drift.event === null ? [] : [result.drift.event],
    write: (now, version) => {
      q.insertStep.run({
        session_id: meta.id,
        step_number: result.step_number,
        agent_id: meta.agent_id,
        description: input.description,
        output: input.output,
        verification: JSON.stringify(result.verification),
        drift: JSON.stringify(result.drift),
        recommended_action: result.verification.recommended_action,
        created_at: now,
        version,
      })
      withWrite?.(result)
    },
  }
}

export interface SessionWriter {
  q: SessionStatements
  db: Database.Database
  metrics: Metrics
  /** Journaled ops between two snapshots. */
  snapshotEvery: number
}

/** The cached session being written: its version, journal rows since its snapshot, unwritten reminders. */
export interface WrittenEntry {
  version: number
  pending: number
  session: GoalSession
  deferred?: DeferredReminder[] | undefined
}

/**
 * Writes `outcome` on top of `meta.version`; throws LostRace when the row has moved on. Takes the
 * entry's deferred reminders with it. Returns the version written and the journal rows now
 * pending since the last snapshot.
 */
export function writeOutcome<T>(w: SessionWriter, meta: SessionKey, entry: WrittenEntry, outcome: MutationOutcome<T>, now: number): { version: number; pending: number } {
  const { session } = entry
  const q = w.q
  const deferred = entry.deferred?.length ? entry.deferred : undefined
  entry.deferred = undefined
  const extra = deferred === undefined ? 0 : 1
  const journal = outcome.op !== undefined && entry.pending + 1 + extra < w.snapshotEvery
  // Journaled: the deferred reminders are a row of their own before this op; a snapshot holds them.
  const version = meta.version + 1 + (journal ? extra : 0)
  const row = { id: meta.id, agent_id: meta.agent_id, version: meta.version, next_version: version, state: JSON.stringify(session.state()), updated_at: now }
  // Journaled ops never change goal or plan, so their write leaves those columns alone.
  const res = journal ? q.writeState.run(row) : q.writeMeta.run({ ...row, goal: session.goal, plan: JSON.stringify(session.plan) })
  if (res.changes !== 1) throw new LostRace()
  if (journal && deferred !== undefined) q.appendOp.run(meta.id, version - 1, deferred[deferred.length - 1]!.at, JSON.stringify({ kind: 'reminders', items: deferred }))
  // A step's row (outcome.write) is its journal entry; every other op gets a session_ops row.
  if (journal && outcome.op!.kind !== 'step') q.appendOp.run(meta.id, version, now, JSON.stringify(outcome.op))
  else if (!journal) writeSnapshot(q, meta.id, version, session)
  outcome.write?.(now, version)
  for (const e of outcome.drift_events ?? []) {
    q.insertDriftEvent.run({
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
    enqueue(w.db, meta.agent_id, `session.${e.type}`, { session_id: meta.id, ...e.data }, now)
  }
  for (const e of outcome.drift_events ?? []) w.metrics.driftEvents.inc({ severity: e.severity })
  return { version, pending: journal ? entry.pending + 1 + extra : 0 }
}

/** A full snapshot at `version`; the journal rows it covers go. */
export function writeSnapshot(q: SessionStatements, id: string, version: number, session: GoalSession): void {
  q.putSnapshot.run(id, version, JSON.stringify(session.toJSON()))
  q.dropOps.run(id, version)
}

/** The version check failed: another writer committed first. */
export class LostRace extends Error {
  constructor() {
    super('The session changed while this request was computed; retry it.')
    this.name = 'LostRace'
  }
}

export function assertActive(meta: SessionKey): void {
  if (meta.status === 'archived') throw conflict(`Session ${meta.id} is archived; unarchive it (PATCH status: active) to change it.`)
}

/** A lost race after the retries the caller allows: 409. */
export const raceConflict = () => conflict('The session was changed concurrently; retry the request.')
