/** The data shapes of a goal session (the API's field names): results, events and its JSON state. */
import type { DriftCheck, DriftSeverity, GoalDNAJSON, TrendDirection } from '../drift/goal-dna.js'
import type { GoalReminderJSON } from '../context/goal-reminder.js'
import type { GoalState, GoalTrackerJSON, GoalTrackerSummary, StepVerification } from './goal-tracker.js'
import type { ChatMessage, PlanTask, RecitationJSON, TodoItem } from '../context/recitation.js'
import type { SessionConfig } from './session-config.js'
import type { Clock } from '../clock.js'
import type { BudgetExceeded, BudgetWarning, DetectionJSON, DetectionVerdict } from '../detection/session-detection.js'
import type { LoopKind } from '../detection/loop-kinds.js'
import type { UnchangedSkip } from '../context/unchanged.js'
import type { AgentTurnJSON, StopOutcome } from './agent-turn.js'
import type { TodoListJSON } from './todo-tools.js'
import type { StepReaderJSON } from '../drift/step-evidence.js'

export interface RecitationContext {
  plan_tasks?: PlanTask[]
  todos?: TodoItem[]
  memories?: string[]
  active_files?: string[]
  recent_errors?: string[]
}

export type SessionEvent =
  | { type: 'drift_detected'; data: { step_number: number; similarity: number; severity: DriftSeverity; consecutive_drift_count: number; action_text: string } }
  | { type: 'loop_detected'; data: { step_number: number; loop_count: number; description: string; kind?: LoopKind; steps?: number[] } }
  | { type: 'stalled'; data: { step_number: number; stall_turns: number; kind: 'idle' | 'busy'; busy_steps?: number; since?: number } }
  | { type: 'budget_warning'; data: BudgetWarning }
  | { type: 'budget_exceeded'; data: BudgetExceeded }
  | { type: 'stopped'; data: { step_number: number; outcome: StopOutcome; open_items: string[] } }

export interface StepResult {
  step_number: number
  verification: StepVerification & DetectionVerdict
  drift: DriftCheck
  state: GoalState
}

/** What a mutation returns besides its result: the episode events to publish. */
export interface WithEvents<T> {
  result: T
  events: SessionEvent[]
}

export interface ReminderOverrides {
  drift_score?: number
  is_drift_active?: boolean
  summary?: string
  current_sub_goal?: string
}

export interface RecitationPreview {
  should_inject: boolean
  frequency: number
  content: string | null
  text: string | null
  token_estimate: number
  /** Set when skip_unchanged holds back a due block identical to the last one injected. */
  skipped?: UnchangedSkip
}

export interface RecitationInjection<M extends ChatMessage> {
  messages: Array<M | ChatMessage>
  injected: boolean
  recitation: { text: string; token_estimate: number } | null
  skipped?: UnchangedSkip
}

/** The tracker's summary plus the fingerprint's and the reminder injector's. */
export interface SessionSummary extends GoalTrackerSummary {
  dna: { token_count: number; total_checks: number; drift_events: number; trend_direction: TrendDirection; consecutive_drift_count: number }
  reminders: { total_reminders: number; pitfalls_count: number; tried_approaches_count: number; history_size: number }
}

export interface GoalSessionJSON {
  goal: string
  config: SessionConfig
  step_count: number
  context: RecitationContext
  tracker: GoalTrackerJSON
  dna: GoalDNAJSON
  reminder: GoalReminderJSON
  recitation: RecitationJSON
  /** Absent in snapshots written before loop kinds, escalation, budgets and skip_unchanged. */
  detection?: DetectionJSON
  /** Later prompts and stop blocks (agent-turn.ts); absent in older snapshots. */
  turn?: AgentTurnJSON
  /** The agent's todo list (todo-tools.ts); absent in older snapshots. */
  todos?: TodoListJSON
  /** Files the session changed, on sessions that read steps for evidence (absent before them). */
  reader?: StepReaderJSON
}

export interface GoalSessionOptions {
  clock?: Clock
  /** How long an LLM verification may take before the heuristic is used, ms. */
  llmTimeoutMs?: number
}
