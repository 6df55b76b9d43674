/**
 * A session's contribution to `POST /v1/turns` (TurnPartsProvider of turns.ts): the goal
 * reminder, and the recitation block when it is due at this iteration.
 */
import type { GoalSession } from '../engine/session/goal-session.js'
import type { SkippedPart, TurnMessage, TurnPart, TurnPartsProvider } from '../reminders/turns.js'

/** Priorities of the turn merge (lower goes first), as in reminder-render.ts TURN_PRIORITY. */
const GOAL_REMINDER_PRIORITY = 1
const RECITATION_PRIORITY = 3

export type TurnPartsInput = Parameters<TurnPartsProvider['turnParts']>[0]
export interface SessionTurnParts {
  parts: TurnPart[]
  messages?: TurnMessage[]
  skipped?: SkippedPart[]
}

/**
 * The reminder's turn number is the iteration when given, else the next step's number. With
 * `messages`, a due recitation is placed in them (and recorded). Without, it becomes a part of
 * the merged injection text. Either way a part is recorded as shown only if `input.fit` keeps it:
 * a reminder or recitation the token budget drops was never shown (a dropped recitation stays due).
 * With skip_unchanged, a block identical to the last one injected is held back and reported.
 */
export function sessionTurnParts(session: GoalSession, input: TurnPartsInput): SessionTurnParts {
  const iteration = input.iteration ?? session.stepsTaken + 1
  const parts: TurnPart[] = []
  const skipped: SkippedPart[] = []
  // Read-only first; the same state and clock make the recorded versions these very texts.
  const reminder = session.reminderPreview(iteration)
  let reminderAt = -1
  if (reminder.text !== '') {
    const skip = session.unchangedSkip('goal_reminder', reminder.text, iteration)
    if (skip !== null) skipped.push({ kind: 'goal_reminder', priority: GOAL_REMINDER_PRIORITY, content: reminder.text, skip })
    else reminderAt = parts.push({ kind: 'goal_reminder', priority: GOAL_REMINDER_PRIORITY, content: reminder.text }) - 1
  }
  if (input.messages !== undefined) {
    const r = session.injectRecitation(iteration, input.messages)
    if (r.skipped !== undefined) skipped.push({ kind: 'recitation', priority: RECITATION_PRIORITY, content: session.recitation(iteration).text ?? '', skip: r.skipped })
    if (input.fit(parts).has(reminderAt)) session.recordReminder(reminder)
    return withSkipped({ parts, messages: r.messages as TurnMessage[] }, skipped)
  }
  const preview = session.recitation(iteration)
  if (preview.skipped !== undefined) skipped.push({ kind: 'recitation', priority: RECITATION_PRIORITY, content: preview.text ?? '', skip: preview.skipped })
  const recitationAt = preview.should_inject && preview.text !== null ? parts.push({ kind: 'recitation', priority: RECITATION_PRIORITY, content: preview.text }) - 1 : -1
  const kept = input.fit(parts)
  if (kept.has(reminderAt)) session.recordReminder(reminder)
  if (kept.has(recitationAt)) session.injectRecitation(iteration, [])
  return withSkipped({ parts }, skipped)
}

function withSkipped(out: SessionTurnParts, skipped: SkippedPart[]): SessionTurnParts {
  if (skipped.length > 0) out.skipped = skipped
  return out
}
