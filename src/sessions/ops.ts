/**
 * The journaled session operations: small, deterministic inputs that the live request and the
 * replay after a restart apply through the same `applyOp`, at the same (recorded) clock reading,
 * so a session rebuilt from its snapshot plus journal equals the one that served the requests.
 */
import type { Clock } from '../engine/clock.js'
import type { DriftCheck } from '../engine/goal-dna.js'
import type { GoalReminder } from '../engine/goal-reminder.js'
import type { GoalSession, RecitationContext, ReminderOverrides, SessionEvent, StepResult, WithEvents } from '../engine/goal-session.js'
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

/** A reminder built without a write of its own (see SessionEngineStore.remind), at its clock reading. */
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

/**
 * The op as journaled: a drift check carries the score it used, so a later scorer (a new version of
 * `enhanced`) cannot change what a replay rebuilds. An `embeddings` check that fell back is left
 * without one: its replay scores it with `enhanced` again, as it was (steps follow the same rule,
 * session-store.ts `journalSteps`).
 */
export function journaled<K extends SessionOp['kind']>(op: OpOf<K>, result: OpResults[K]): OpOf<K> {
  const o = op as SessionOp
  if (o.kind !== 'drift_check') return op
  const { result: check } = result as OpResults['drift_check']
  return check.similarity_mode === 'enhanced' ? op : ({ ...o, similarity: check.similarity } as OpOf<K>)
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

/**
 * A session's clock: the service clock, except while an operation runs, when it is pinned to the
 * one reading the operation is recorded at (live), or was recorded at (replay). Pinning live too
 * means an op that reads the clock twice sees one instant, which the replay can reproduce.
 */
export class SessionClock {
  private pinnedAt: number | undefined
  readonly clock: Clock

  constructor(base: Clock) {
    this.clock = () => this.pinnedAt ?? base()
  }

  /** Runs `fn` with the clock reading `at`. */
  at<T>(at: number, fn: () => T): T {
    const outer = this.pinnedAt
    this.pinnedAt = at
    try {
      return fn()
    } finally {
      this.pinnedAt = outer
    }
  }
}
