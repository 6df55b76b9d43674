/** The API shapes of sessions, steps and drift events, and their mapping from rows. */
import { isoAt } from '../engine/clock.js'
import type { DriftCheck, DriftEvent, DriftSeverity } from '../engine/goal-dna.js'
import type { GoalState, StepVerification } from '../engine/goal-tracker.js'
import type { SessionConfig, SessionConfigInput } from '../engine/session-config.js'
import type { RecommendedAction } from '../engine/step-alignment.js'
import type { DriftEventRow, RecentStep, SessionRow, StepRow } from './repository.js'

export type SessionStatus = 'active' | 'archived'

export interface Session {
  id: string
  goal: string
  plan: string[]
  status: SessionStatus
  config: SessionConfig
  metadata: Record<string, unknown>
  state: GoalState
  created_at: string
  updated_at: string
}

export interface CreateSessionInput {
  goal: string
  plan?: string[]
  config?: SessionConfigInput
  metadata?: Record<string, unknown>
}

export interface StepLogEntry {
  step_number: number
  description: string
  output: string
  verification: StepVerification
  drift: DriftCheck
  created_at: string
}

/** A row of the dashboard's sessions list: the session and its recent steps in brief. */
export interface SessionDigest {
  session: Session
  step_count: number
  last_step_at: string | null
  last_action: RecommendedAction | null
  /** The drift similarity of the last steps (at most SPARKLINE_STEPS), oldest first. */
  recent_similarity: number[]
}

/** Steps behind a digest's sparkline. */
export const SPARKLINE_STEPS = 40

export function toDigest(row: SessionRow, recent: RecentStep[]): SessionDigest {
  const last = recent[0]
  return {
    session: toSession(row),
    step_count: last?.step_number ?? 0,
    last_step_at: last === undefined ? null : isoAt(last.created_at),
    last_action: (last?.recommended_action as RecommendedAction | undefined) ?? null,
    recent_similarity: recent.map((r) => Number(r.similarity)).reverse(),
  }
}

export function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    goal: row.goal,
    plan: JSON.parse(row.plan) as string[],
    status: row.status,
    config: JSON.parse(row.config) as SessionConfig,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    state: JSON.parse(row.state) as GoalState,
    created_at: isoAt(row.created_at),
    updated_at: isoAt(row.updated_at),
  }
}

export function toStep(row: StepRow): StepLogEntry {
  return {
    step_number: row.step_number,
    description: row.description,
    output: row.output,
    verification: JSON.parse(row.verification) as StepVerification,
    drift: JSON.parse(row.drift) as DriftCheck,
    created_at: isoAt(row.created_at),
  }
}

export function toDriftEvent(row: DriftEventRow): DriftEvent {
  return {
    step_number: row.step_number,
    similarity: row.similarity,
    action_text: row.action_text,
    severity: row.severity as DriftSeverity,
    // The engine stamps the event with the same clock reading the row records.
    timestamp: isoAt(row.created_at),
  }
}
