/**
 * A session's contribution to `POST /v1/turns` (TurnPartsProvider of turns.ts): the goal
 * reminder, and the recitation block when it is due at this iteration.
 */
import type { GoalSession } from '../engine/goal-session.js'
import type { TurnMessage, TurnPart, TurnPartsProvider } from './turns.js'

/** Priorities of the turn merge (lower goes first), as in reminder-render.ts TURN_PRIORITY. */
export const GOAL_REMINDER_PRIORITY = 1
export const RECITATION_PRIORITY = 3

export type TurnPartsInput = Parameters<TurnPartsProvider['turnParts']>[0]
export interface SessionTurnParts {
  parts: TurnPart[]
  messages?: TurnMessage[]
}

/**
 * The reminder's turn number is the iteration when given, else the next step's number. With
 * `messages`, a due recitation is placed in them (and recorded). Without, it becomes a part of
 * the merged injection text, and is recorded as injected only if `input.fit` keeps it: a
 * recitation the token budget drops was never shown, so it must stay due.
 */
export function sessionTurnParts(session: GoalSession, input: TurnPartsInput): SessionTurnParts {
  const iteration = input.iteration ?? session.stepsTaken + 1
  const parts: TurnPart[] = []
  const reminder = session.reminder(iteration)
  if (reminder.text !== '') parts.push({ kind: 'goal_reminder', priority: GOAL_REMINDER_PRIORITY, content: reminder.text })
  if (input.messages !== undefined) {
    const r = session.injectRecitation(iteration, input.messages)
    input.fit(parts)
    return { parts, messages: r.messages as TurnMessage[] }
  }
  // Read-only first; the same state and clock make `injectRecitation` build this very block.
  const preview = session.recitation(iteration)
  const at = preview.should_inject && preview.text !== null ? parts.push({ kind: 'recitation', priority: RECITATION_PRIORITY, content: preview.text }) - 1 : -1
  if (input.fit(parts).has(at)) session.injectRecitation(iteration, [])
  return { parts }
}
