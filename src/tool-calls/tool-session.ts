/**
 * The goal session of a coding agent watched from outside its loop (its hooks, its OTLP
 * telemetry): keyed by the agent's own id for it (`external_id`, unique per agent), with the
 * config sessions of tool calls get, then the agent's `session_defaults`, then the caller's own
 * overrides (a hook URL's query string).
 */
import { HOOK_LOOP_KINDS } from '../engine/detection/detection-config.js'
import { GOAL_TEXT_MAX } from '../engine/session/agent-turn.js'
import type { SessionConfigInput } from '../engine/session/session-config.js'
import { truncateChars } from '../engine/similarity/text.js'
import { AppError } from '../errors.js'
import type { SettingsService } from '../reminders/settings.js'
import type { Session } from '../sessions/model.js'
import type { SessionsService } from '../sessions/service.js'

/**
 * What a session of tool calls gets before the agent's `session_defaults` (on top of a new
 * session's defaults): the loop kinds for steps that are tool calls (detection-config.ts) and
 * reminders that are not repeated while unchanged.
 */
const TOOL_SESSION_CONFIG: Readonly<SessionConfigInput> = { loop_kinds: [...HOOK_LOOP_KINDS], skip_unchanged: true }

/** The config of a new session of tool calls: TOOL_SESSION_CONFIG, then the agent's defaults, then `overrides`. */
function toolSessionConfig(defaults: SessionConfigInput, overrides: SessionConfigInput = {}): SessionConfigInput {
  const budget = { ...defaults.budget, ...overrides.budget }
  return { ...TOOL_SESSION_CONFIG, ...defaults, ...overrides, ...(Object.keys(budget).length === 0 ? {} : { budget }) }
}

export interface OpenToolSession {
  /** The agent's own id for the session (a coding agent's session id, an OTLP conversation id). */
  external: string
  goal: string
  metadata: Record<string, unknown>
  overrides?: SessionConfigInput
}

/**
 * Opens the agent's session for `external` with `goal`, or returns the one another event of the
 * same session opened first (the create's 409 on the unique external id).
 */
export async function openToolSession(deps: { sessions: SessionsService; settings: SettingsService }, agentId: string, o: OpenToolSession): Promise<Session> {
  const { session_defaults } = await deps.settings.get(agentId)
  const input = {
    goal: truncateChars(o.goal, GOAL_TEXT_MAX),
    config: toolSessionConfig(session_defaults, o.overrides),
    metadata: o.metadata,
    external_id: o.external,
  }
  try {
    return await deps.sessions.create(agentId, input)
  } catch (err) {
    const existing = err instanceof AppError && err.status === 409 ? await deps.sessions.byExternalId(agentId, o.external) : undefined
    if (existing === undefined) throw err
    return existing
  }
}
