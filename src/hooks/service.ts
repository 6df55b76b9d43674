/**
 * Coding agents' hooks on goal sessions. Each hook event (hooks/events.ts) becomes what the
 * session service already does: the first prompt opens the session (keyed by the agent's own
 * session id as `external_id`), a later one joins the goal and gets the turn-start injection; a
 * tool call that ran is a step, whose verdict speaks only when it is not `continue`; a tool call
 * about to run may be denied (SessionDetection.gate); a stop with open todo items may be asked to
 * carry on. Events of a session whose first prompt goalkeeper never saw change nothing.
 */
import type { SettingsService } from '../reminders/settings.js'
import type { TurnsService } from '../reminders/turns.js'
import type { SessionsService } from '../sessions/service.js'
import { adviceFor } from './advice.js'
import type { HookAnswer, HookEvent } from './events.js'
import { redact } from '../tool-calls/redact.js'
import { toolOf, toolStep } from '../tool-calls/tool-step.js'
import { openToolSession } from '../tool-calls/tool-session.js'
import { hookConfigOverrides, hookSettings, type HookQuery } from './settings.js'

export interface HooksDeps {
  sessions: SessionsService
  turns: TurnsService
  settings: SettingsService
}

/** Which coding agent sent the event (kept in the session's metadata). */
export type HookClient = 'claude-code' | 'codex' | 'gemini-cli'

export class HooksService {
  readonly sessions: SessionsService
  readonly settings: SettingsService
  private readonly turns: TurnsService

  constructor(deps: HooksDeps) {
    this.sessions = deps.sessions
    this.turns = deps.turns
    this.settings = deps.settings
  }

  async handle(agentId: string, client: HookClient, event: HookEvent, query: HookQuery): Promise<HookAnswer> {
    if (event.kind === 'other' || event.session === '') return {}
    if (event.kind === 'prompt') return this.prompt(agentId, client, event.session, redact(event.prompt), query)
    const session = await this.sessions.byExternalId(agentId, event.session)
    if (session === undefined || session.status !== 'active') return {}
    switch (event.kind) {
      case 'session_start': {
        // After a compaction the model has lost the details: the recitation goes in whatever its schedule.
        if (event.source !== 'compact') return {}
        const text = await this.sessions.recite(agentId, session.id)
        return text === null ? {} : { context: text }
      }
      case 'compacted':
        await this.sessions.compacted(agentId, session.id)
        return {}
      case 'pre_tool': {
        const reason = await this.sessions.gateTool(agentId, session.id, toolOf(event.name, event.input))
        return reason === null ? {} : { deny: reason }
      }
      case 'post_tool': {
        const { tool_output } = await this.hookSettings(agentId, query)
        const step = toolStep(toolOf(event.name, event.input), event.response, event.error, { tool_output, contextTokens: true })
        const advice = adviceFor(await this.sessions.step(agentId, session.id, step))
        return this.withRecitation(agentId, session.id, advice)
      }
      case 'stop': {
        // Its subagents may be doing the open items: let it wait for them.
        if (event.waiting) return {}
        const { max_stop_blocks } = await this.hookSettings(agentId, query)
        const check = await this.sessions.stop(agentId, session.id, max_stop_blocks)
        return check.block === null ? {} : { block: check.block }
      }
    }
  }

  /**
   * The first prompt opens the session with itself as the goal, and gets what is due or on its
   * topic; a later one joins the goal and gets the turn-start injection (goal reminder,
   * recitation, reminders) within the agent's budget.
   */
  private async prompt(agentId: string, client: HookClient, external: string, prompt: string, query: HookQuery): Promise<HookAnswer> {
    if (prompt.trim() === '') return {}
    const session = await this.sessions.byExternalId(agentId, external)
    if (session === undefined) {
      await openToolSession(this, agentId, { external, goal: prompt, metadata: { source: client }, overrides: hookConfigOverrides(query) })
      return this.injection(agentId, prompt)
    }
    if (session.status !== 'active') return {}
    await this.sessions.userPrompt(agentId, session.id, prompt)
    const { context } = await this.injection(agentId, prompt, session.id)
    return this.withRecitation(agentId, session.id, context ?? null)
  }

  /** `context`, and the recitation when a compaction is waiting for one (it cannot go in when Claude Code compacts). */
  private async withRecitation(agentId: string, sessionId: string, context: string | null): Promise<HookAnswer> {
    const recitation = await this.sessions.recite(agentId, sessionId, true)
    const text = [context, recitation].filter((t) => t !== null).join('\n\n')
    return text === '' ? {} : { context: text }
  }

  private async injection(agentId: string, prompt: string, sessionId?: string): Promise<HookAnswer> {
    const turn = await this.turns.start(agentId, { user_message: prompt, ...(sessionId === undefined ? {} : { session_id: sessionId }) })
    return turn.injection.text === '' ? {} : { context: turn.injection.text }
  }

  private async hookSettings(agentId: string, query: HookQuery) {
    return hookSettings((await this.settings.get(agentId)).hooks, query)
  }
}
