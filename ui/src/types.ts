/** The /v1 shapes the dashboard reads (API.md), as far as it uses them. */

export type Action = 'continue' | 'adjust' | 'replan' | 'abort'
export type Severity = 'none' | 'low' | 'moderate' | 'high' | 'critical'

export interface Page<T> {
  items: T[]
  next_cursor: string | null
}

export interface GoalState {
  current_step: number
  total_steps_planned: number
  progress: number
  drift_score: number
  loop_detected: boolean
  loop_count: number
  stall_turns: number
}

export interface Session {
  id: string
  goal: string
  plan: string[]
  status: 'active' | 'archived'
  config: { drift_threshold: number; similarity: string }
  state: GoalState
  created_at: string
  updated_at: string
}

export interface SessionDigest {
  session: Session
  step_count: number
  last_step_at: string | null
  last_action: Action | null
  recent_similarity: number[]
}

export interface Step {
  step_number: number
  description: string
  output: string
  verification: { aligned: boolean; alignment_score: number; reasoning: string; recommended_action: Action }
  drift: { similarity: number; severity: Severity; drifting: boolean; consecutive_drift_count: number }
  created_at: string
}

export interface NextTurn {
  iteration: number
  reminder: { text: string; mode: string; token_estimate: number; includes_drift_warning: boolean }
  recitation: { should_inject: boolean; frequency: number; text: string | null; token_estimate: number }
}

export type Trigger = { type: 'scheduled'; at: string } | { type: 'recurring'; cron: string; timezone?: string | null } | { type: 'context'; pattern: string }

export interface Reminder {
  id: string
  title: string
  body: string | null
  trigger: Trigger
  status: 'pending' | 'triggered' | 'completed' | 'dismissed' | 'snoozed'
  priority: 'urgent' | 'normal' | 'low'
  context_tags: string[]
  snooze_until: string | null
  next_fire_at: string | null
  last_fired_at: string | null
  clamped?: boolean
}

export interface Webhook {
  id: string
  url: string
  event_types: string[]
  description: string | null
  status: 'active' | 'disabled'
  disabled_reason: string | null
  failing_since: string | null
}

export interface Attempt {
  id: string
  message_id: string
  event_type: string
  attempt: number
  status_code: number | null
  error: string | null
  duration_ms: number
  created_at: string
  next_attempt_at: string | null
}
