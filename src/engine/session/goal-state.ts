/** GoalTracker's data: its state snapshot, verdicts, summary and JSON form (the `GoalState` and `Summary` of openapi.yaml). */
import type { Clock } from '../clock.js'
import type { RecommendedAction } from '../drift/step-alignment.js'

export interface GoalState {
  original_goal: string
  current_step: number
  total_steps_planned: number
  progress: number
  drift_score: number
  loop_detected: boolean
  loop_count: number
  stall_turns: number
  timestamp: string
}

export interface StepVerification {
  aligned: boolean
  alignment_score: number
  drift_delta: number
  progress_delta: number
  reasoning: string
  recommended_action: RecommendedAction
}

export interface VerificationRecord extends StepVerification {
  description: string
  drift_score: number
  progress: number
  timestamp: string
}

export interface GoalTrackerSummary {
  goal: string
  progress: number
  drift: number
  steps_completed: number
  steps_planned: number
  loops_detected: number
  stall_turns: number
  elapsed_seconds: number
  verifications: number
  avg_alignment: number
}

export interface GoalTrackerOptions {
  clock?: Clock
  /** How long an LLM verification may take before the heuristic is used, ms. */
  llmTimeoutMs?: number
  /**
   * Keep the per-step verification history (default true). A caller that logs steps itself (the
   * sessions service) turns it off so the tracker's state stays small and cheap to serialize.
   */
  keepHistory?: boolean
}

export interface GoalTrackerJSON {
  goal: string
  plan: string[]
  current_step: number
  progress: number
  drift_score: number
  loop_detected: boolean
  loop_count: number
  stall_turns: number
  /** Loop-detection hashes with their counts, oldest first. */
  state_hashes: [string, number][]
  verifications: number
  alignment_sum: number
  steps_completed: number
  started_at: string
  history: VerificationRecord[]
  /** Present (true) when the plan is the agent's todo list. */
  todo_plan?: boolean
}

// Field by field rather than a spread: one object shape, several times faster for 200 records.
export function copyRecord(r: VerificationRecord): VerificationRecord {
  return {
    aligned: r.aligned,
    alignment_score: r.alignment_score,
    drift_delta: r.drift_delta,
    progress_delta: r.progress_delta,
    reasoning: r.reasoning,
    recommended_action: r.recommended_action,
    description: r.description,
    drift_score: r.drift_score,
    progress: r.progress,
    timestamp: r.timestamp,
  }
}
