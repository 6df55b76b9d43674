/**
 * The episode events a goal session reports (drift_detected, loop_detected, stalled): when each
 * fires, once per episode, by comparing the state before a step with the state after it. Kept
 * apart from GoalSession, which only wires the checks together.
 */
import type { DriftCheck } from '../drift/goal-dna.js'
import type { GoalState } from './goal-tracker.js'
import type { SessionEvent } from './session-types.js'
import { PROGRESS_STALL_TURNS } from '../drift/step-alignment.js'
import type { LoopFinding } from '../detection/loop-kinds.js'
import { cutText } from '../similarity/text.js'

const DESCRIPTION_IN_EVENT = 200

/** The two fields of the state before a step that its loop and stall events are compared against. */
export type StepBefore = Pick<GoalState, 'loop_detected' | 'stall_turns'>

/** `drift_detected` when sustained drift begins (once per episode): none or one event, in a new array. */
export function driftEvents(wasDrifting: boolean, result: DriftCheck, step_number: number, action: string): SessionEvent[] {
  const events: SessionEvent[] = []
  if (result.drifting && !wasDrifting) {
    events.push({
      type: 'drift_detected',
      data: {
        step_number,
        similarity: result.similarity,
        severity: result.severity,
        consecutive_drift_count: result.consecutive_drift_count,
        action_text: result.event?.action_text ?? cutText(action, DESCRIPTION_IN_EVENT),
      },
    })
  }
  return events
}

/** Appends to `events` the loop and stall events that this step started. */
export function pushStepEvents(events: SessionEvent[], step_number: number, description: string, before: StepBefore, state: GoalState, loop: LoopFinding | null = null): void {
  if (state.loop_detected && !before.loop_detected) {
    const data = { step_number, loop_count: state.loop_count, description: cutText(description, DESCRIPTION_IN_EVENT) }
    events.push({ type: 'loop_detected', data: loop === null ? data : { ...data, kind: loop.kind, steps: loop.steps } })
  }
  // Once per stall: when the stall reaches the replan threshold, not on every later turn.
  if (state.stall_turns === PROGRESS_STALL_TURNS && before.stall_turns < PROGRESS_STALL_TURNS) {
    events.push({ type: 'stalled', data: { step_number, stall_turns: state.stall_turns, kind: 'idle' } })
  }
}
