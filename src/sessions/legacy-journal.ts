/**
 * Databases written before every session write took a full snapshot hold a journal past each
 * snapshot: `session_ops` rows and the step rows after it. `foldLegacyJournals` replays them once,
 * at start, through the same engine calls they were recorded with (at the clock reading each ran
 * at), and writes the snapshot they lead to. `PRAGMA user_version` 1 marks a database as folded.
 */
import type Database from 'better-sqlite3'
import type { Clock } from '../engine/clock.js'
import { SessionClock } from './session-clock.js'
import type { DriftCheck } from '../engine/goal-dna.js'
import type { GoalReminder } from '../engine/goal-reminder.js'
import { GoalSession, type GoalSessionJSON, type RecitationContext, type ReminderOverrides, type SessionEvent, type StepResult, type WithEvents } from '../engine/goal-session.js'
import type { GoalState } from '../engine/goal-tracker.js'

export type SessionOp =
  // `similarity`: the score the check used (an `embeddings` cosine fetched before the op, or the
  // session's own scorer's), recorded so a replay reproduces it even after the scorer changes.
  | { kind: 'step'; description: string; output: string; similarity?: number }
  | { kind: 'drift_check'; action: string; step_number?: number; similarity?: number }
  | { kind: 'reminder'; turn: number; overrides: ReminderOverrides }
  | { kind: 'reset_drift' }
  | { kind: 'reset_loop' }
  | { kind: 'pitfall'; text: string }
  | { kind: 'tried_approach'; text: string }
  | { kind: 'set_context'; context: RecitationContext }

export interface OpResults {
  step: StepResult & { events: SessionEvent[] }
  drift_check: WithEvents<DriftCheck>
  reminder: GoalReminder
  reset_drift: GoalState
  reset_loop: GoalState
  pitfall: string[]
  tried_approach: string[]
  set_context: RecitationContext
}

export type OpOf<K extends SessionOp['kind']> = Extract<SessionOp, { kind: K }>

/** A reminder journaled without a write of its own, at its clock reading. */
export interface DeferredReminder {
  at: number
  turn: number
  overrides: ReminderOverrides
}

/** Deferred reminders journaled together in one row, each replayed at its own clock reading. */
export interface RemindersOp {
  kind: 'reminders'
  items: DeferredReminder[]
}

/** What a journal row holds. */
export type JournalOp = SessionOp | RemindersOp

/** The journal past a snapshot in version order: session_ops rows, and step rows (a step's row is its entry). */
export function journalOrder(
  ops: Array<{ version: number; at: number; op: string }>,
  steps: Array<{ version: number; at: number; description: string; output: string; similarity?: number | null }>,
): Array<{ version: number; at: number; op: JournalOp }> {
  const entries = ops.map((row) => ({ version: row.version, at: row.at, op: JSON.parse(row.op) as JournalOp }))
  for (const s of steps) {
    const op: SessionOp = { kind: 'step', description: s.description, output: s.output }
    // A step replays with the score its row recorded (see session-store.ts `journalSteps`).
    if (typeof s.similarity === 'number') op.similarity = s.similarity
    entries.push({ version: s.version, at: s.at, op })
  }
  if (steps.length > 0) entries.sort((a, b) => a.version - b.version)
  return entries
}

/** Replays one journal row recorded at `at` on `s`, whose clock is `clock`. */
export function replayOp(s: GoalSession, clock: SessionClock, at: number, op: JournalOp): void {
  if (op.kind === 'reminders') {
    for (const r of op.items) clock.at(r.at, () => s.reminder(r.turn, r.overrides))
    return
  }
  clock.at(at, () => applyOp(s, op))
}

export function applyOp<K extends SessionOp['kind']>(s: GoalSession, op: OpOf<K>): OpResults[K]
export function applyOp(s: GoalSession, op: SessionOp): OpResults[SessionOp['kind']] {
  switch (op.kind) {
    case 'step':
      return s.step(op.description, op.output, op.similarity)
    case 'drift_check':
      return s.driftCheck(op.action, op.step_number, op.similarity)
    case 'reminder':
      return s.reminder(op.turn, op.overrides)
    case 'reset_drift':
      return s.resetDrift()
    case 'reset_loop':
      return s.resetLoop()
    case 'pitfall':
      return s.addPitfall(op.text)
    case 'tried_approach':
      return s.addTriedApproach(op.text)
    case 'set_context':
      return s.setContext(op.context)
  }
}

/** Replays every journal past its snapshot into a new snapshot, once per database. */
export function foldLegacyJournals(sqlite: Database.Database, base: Clock): number {
  if ((sqlite.pragma('user_version', { simple: true }) as number) >= 1) return 0
  const pending = sqlite
    .prepare<[], { id: string; version: number }>(
      `SELECT s.id, s.version FROM sessions s JOIN session_snapshots p ON p.session_id = s.id
       WHERE EXISTS (SELECT 1 FROM session_ops o WHERE o.session_id = s.id)
          OR EXISTS (SELECT 1 FROM steps st WHERE st.session_id = s.id AND st.version > p.version)`,
    )
    .all()
  const snapshot = sqlite.prepare<[string], { version: number; snapshot: string }>('SELECT version, snapshot FROM session_snapshots WHERE session_id = ?')
  const ops = sqlite.prepare<[string, number], { version: number; at: number; op: string }>('SELECT version, at, op FROM session_ops WHERE session_id = ? AND version > ? ORDER BY version')
  // A step replays with the score it recorded, except an embeddings fallback, scored by `enhanced` again.
  const steps = sqlite.prepare<[string, number, number], { version: number; at: number; description: string; output: string; similarity: number | null }>(
    `SELECT version, created_at AS at, description, output,
            CASE WHEN drift ->> '$.similarity_mode' = 'enhanced' THEN NULL ELSE drift ->> '$.similarity' END AS similarity FROM steps
     WHERE session_id = ? AND step_number > ? AND version > ? ORDER BY step_number`,
  )
  const put = sqlite.prepare('UPDATE session_snapshots SET version = ?, snapshot = ? WHERE session_id = ?')
  const drop = sqlite.prepare('DELETE FROM session_ops WHERE session_id = ?')
  sqlite.transaction(() => {
    for (const { id, version } of pending) {
      const snap = snapshot.get(id)!
      const json = JSON.parse(snap.snapshot) as GoalSessionJSON
      const clock = new SessionClock(base)
      const session = GoalSession.fromJSON(json, { clock: clock.clock })
      for (const e of journalOrder(ops.all(id, snap.version), steps.all(id, json.step_count, snap.version))) replayOp(session, clock, e.at, e.op)
      put.run(version, JSON.stringify(session.toJSON()), id)
      drop.run(id)
    }
    sqlite.pragma('user_version = 1')
  })()
  return pending.length
}
