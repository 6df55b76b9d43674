/**
 * A session's contribution to `POST /v1/turns` (the reminders service's TurnPartsProvider): the
 * goal reminder, and the recitation block when it is due at this iteration.
 */
import type { GoalSession } from '../engine/goal-session.js'
import type { ChatMessage } from '../engine/recitation.js'

/** Priorities of the turn merge (lower goes first): reminders service's TURN_PRIORITY. */
export const GOAL_REMINDER_PRIORITY = 1
export const RECITATION_PRIORITY = 3

export interface TurnPartsInput {
  agentId: string
  sessionId: string
  iteration: number | undefined
  messages: unknown[] | undefined
  nowMs: number
}

export interface SessionTurnParts {
  parts: { kind: string; priority: number; content: string }[]
  messages?: unknown[]
}

function isChatMessage(m: unknown): m is ChatMessage {
  return typeof m === 'object' && m !== null && typeof (m as { role?: unknown }).role === 'string'
}

/**
 * The turn number of the reminder is the iteration when given, else the next step's number. With
 * `messages`, a due recitation is placed in them (and recorded); without, it is a part of the
 * merged injection text and is recorded as injected too.
 */
export function sessionTurnParts(session: GoalSession, input: TurnPartsInput): SessionTurnParts {
  const iteration = input.iteration ?? session.stepsTaken + 1
  const parts: SessionTurnParts['parts'] = []
  const reminder = session.reminder(iteration)
  if (reminder.text !== '') parts.push({ kind: 'goal_reminder', priority: GOAL_REMINDER_PRIORITY, content: reminder.text })
  if (input.messages !== undefined && input.messages.every(isChatMessage)) {
    const r = session.injectRecitation(iteration, input.messages)
    return { parts, messages: r.messages }
  }
  const r = session.injectRecitation(iteration, [])
  if (r.recitation !== null) parts.push({ kind: 'recitation', priority: RECITATION_PRIORITY, content: r.recitation.text })
  return { parts }
}
