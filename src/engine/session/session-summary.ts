/**
 * A goal session's summary: the tracker's plus the parts of the fingerprint's and the
 * reminder injector's that the API reports. A pure reshaping, kept out of the GoalSession aggregate.
 */
import type { GoalDNASummary } from '../drift/goal-dna.js'
import type { ReminderStats } from '../context/goal-reminder.js'
import type { GoalTrackerSummary } from './goal-tracker.js'
import type { SessionSummary } from './session-types.js'

export function sessionSummary(goal: string, t: GoalTrackerSummary, d: GoalDNASummary, r: ReminderStats): SessionSummary {
  return {
    goal,
    progress: t.progress,
    drift: t.drift,
    steps_completed: t.steps_completed,
    steps_planned: t.steps_planned,
    loops_detected: t.loops_detected,
    stall_turns: t.stall_turns,
    elapsed_seconds: t.elapsed_seconds,
    verifications: t.verifications,
    avg_alignment: t.avg_alignment,
    dna: {
      token_count: d.token_count,
      total_checks: d.total_checks,
      drift_events: d.drift_events,
      trend_direction: d.trend_direction,
      consecutive_drift_count: d.consecutive_drift_count,
    },
    reminders: {
      total_reminders: r.total_reminders,
      pitfalls_count: r.pitfalls_count,
      tried_approaches_count: r.tried_approaches_count,
      history_size: r.history_size,
    },
  }
}
