/** The API shapes of sessions, steps and drift events, and their mapping from rows. */
import { isoAt } from '../engine/clock.js'
import type { DriftCheck, DriftEvent, DriftSeverity } from '../engine/drift/goal-dna.js'
import type { GoalState, StepVerification } from '../engine/session/goal-tracker.js'
import type { GoalSession } from '../engine/session/goal-session.js'
import { escalationMode, type EscalationInput } from '../engine/detection/escalation.js'
import type { SessionConfig, SessionConfigInput } from '../engine/session/session-config.js'
import type { RecommendedAction } from '../engine/drift/step-alignment.js'
import type { StepSignals, StepTool } from '../engine/detection/loop-kinds.js'
import type { DetectionVerdict } from '../engine/detection/session-detection.js'
import type { DriftEventRow, JournalStep, RecentStep, SessionRow, StepRow } from './repository.js'

export type SessionStatus = 'active' | 'archived'

export interface Session {
  id: string
  goal: string
  plan: string[]
  status: SessionStatus
  config: SessionConfig
  metadata: Record<string, unknown>
  state: GoalState
  external_id: string | null
  parent_id: string | null
  created_at: string
  updated_at: string
}

export interface CreateSessionInput {
  goal: string
  external_id?: string
  /** The session of the same agent this one works for (a sub-agent's session names its parent's). */
  parent_id?: string
  plan?: string[]
  config?: SessionConfigInput
  metadata?: Record<string, unknown>
}

/** A step as posted: the optional fields beside description and output (StepSignals). */
export interface StepInput extends StepSignals {
  description: string
  output?: string
}

export interface StepLogEntry extends StepSignals {
  step_number: number
  description: string
  output: string
  verification: StepVerification & DetectionVerdict
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

/** A config as stored; one stored before `seed` was renamed says `immediate` (escalation.ts). */
function storedConfig(json: string): SessionConfig {
  const c = JSON.parse(json) as Omit<SessionConfig, 'escalation'> & { escalation?: EscalationInput }
  return c.escalation === undefined ? (c as SessionConfig) : { ...c, escalation: escalationMode(c.escalation) }
}

/** A new session's row: version 1, active, with the engine's goal, plan, config and state. */
export function newSessionRow(id: string, agentId: string, session: GoalSession, input: CreateSessionInput, now: number): SessionRow {
  return {
    id,
    agent_id: agentId,
    goal: session.goal,
    plan: JSON.stringify(session.plan),
    status: 'active',
    config: JSON.stringify(session.config),
    metadata: JSON.stringify(input.metadata ?? {}),
    state: JSON.stringify(session.state()),
    version: 1,
    external_id: input.external_id ?? null,
    parent_id: input.parent_id ?? null,
    created_at: now,
    updated_at: now,
  }
}

export function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    goal: row.goal,
    plan: JSON.parse(row.plan) as string[],
    status: row.status,
    config: storedConfig(row.config),
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    state: JSON.parse(row.state) as GoalState,
    external_id: row.external_id,
    parent_id: row.parent_id,
    created_at: isoAt(row.created_at),
    updated_at: isoAt(row.updated_at),
  }
}

export function toStep(row: StepRow): StepLogEntry {
  return {
    step_number: row.step_number,
    description: row.description,
    output: row.output,
    ...signalsOf(row),
    verification: JSON.parse(row.verification) as StepVerification & DetectionVerdict,
    drift: JSON.parse(row.drift) as DriftCheck,
    created_at: isoAt(row.created_at),
  }
}

/** The step columns of a step's optional fields (null when not sent). */
export function signalColumns(s: StepSignals): Pick<StepRow, 'tool' | 'error' | 'tokens' | 'cost_usd'> {
  return {
    tool: s.tool === undefined ? null : JSON.stringify(s.tool),
    error: s.error === undefined ? null : s.error ? 1 : 0,
    tokens: s.tokens ?? null,
    cost_usd: s.cost_usd ?? null,
  }
}

/** The optional fields of a step row (log entry or journal entry), as they were sent. */
export function signalsOf(row: Pick<JournalStep, 'tool' | 'error' | 'tokens' | 'cost_usd'>): StepSignals {
  const out: StepSignals = {}
  if (row.tool !== null) out.tool = JSON.parse(row.tool) as StepTool
  // 0/1 on SQLite, a boolean on PostgreSQL.
  if (row.error !== null) out.error = row.error === 1 || row.error === true
  if (row.tokens !== null) out.tokens = row.tokens
  if (row.cost_usd !== null) out.cost_usd = row.cost_usd
  return out
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
