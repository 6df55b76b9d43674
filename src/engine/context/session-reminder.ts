/** The input of a session's goal reminder: progress and drift from its live state unless overridden. */
import type { BuildReminderInput } from './goal-reminder.js'
import type { GoalTracker } from '../session/goal-tracker.js'
import type { ReminderOverrides } from '../session/session-types.js'

export function reminderInputOf(tracker: GoalTracker, drifting: boolean, turn: number, overrides: ReminderOverrides): BuildReminderInput {
  const s = tracker.getState()
  const plan = tracker.getPlan()
  const subGoal = overrides.current_sub_goal ?? plan[s.current_step]
  return {
    turn_number: turn,
    drift_score: overrides.drift_score ?? s.drift_score,
    is_drift_active: overrides.is_drift_active ?? drifting,
    progress: {
      current_step: s.current_step,
      total_steps: s.total_steps_planned,
      progress_pct: s.progress,
      ...(overrides.summary === undefined ? {} : { summary: overrides.summary }),
      ...(subGoal === undefined ? {} : { current_sub_goal: subGoal }),
    },
  }
}
