/**
 * Claude Code's hook events (its http hooks POST each event's JSON) and its hook output JSON:
 * `hookSpecificOutput.additionalContext` for context, `permissionDecision: "deny"` with its reason
 * on PreToolUse, `decision: "block"` with its reason on Stop. An empty object changes nothing.
 */
import type { HookAnswer, HookEvent } from './events.js'

export type ClaudeCodeOutput = {
  decision?: 'block'
  reason?: string
  hookSpecificOutput?: {
    hookEventName: string
    additionalContext?: string
    permissionDecision?: 'deny'
    permissionDecisionReason?: string
  }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

export function readClaudeCode(body: Record<string, unknown>): HookEvent {
  const session = str(body.session_id)
  switch (body.hook_event_name) {
    case 'SessionStart':
      return { kind: 'session_start', session, source: str(body.source) }
    case 'UserPromptSubmit':
      return { kind: 'prompt', session, prompt: str(body.prompt) }
    case 'PreToolUse':
      return { kind: 'pre_tool', session, name: str(body.tool_name), input: body.tool_input }
    case 'PostToolUse':
      return { kind: 'post_tool', session, name: str(body.tool_name), input: withTaskId(body), response: body.tool_response, error: false }
    case 'PostToolUseFailure':
      return { kind: 'post_tool', session, name: str(body.tool_name), input: body.tool_input, response: body.error, error: true }
    case 'Stop':
      return { kind: 'stop', session, waiting: Array.isArray(body.background_tasks) && body.background_tasks.length > 0 }
    case 'PostCompact':
      return { kind: 'compacted', session }
    default:
      return { kind: 'other' }
  }
}

/** A TaskCreate's arguments with the id its answer gave (`{ task: { id } }`): TaskUpdate names the task by it. */
function withTaskId(body: Record<string, unknown>): unknown {
  const input = body.tool_input
  const id = (body.tool_response as { task?: { id?: unknown } } | undefined)?.task?.id
  if (body.tool_name !== 'TaskCreate' || input === null || typeof input !== 'object' || (typeof id !== 'string' && typeof id !== 'number')) return input
  return { ...input, taskId: String(id) }
}

export function writeClaudeCode(eventName: string, answer: HookAnswer): ClaudeCodeOutput {
  if (answer.deny !== undefined) {
    return { hookSpecificOutput: { hookEventName: eventName, permissionDecision: 'deny', permissionDecisionReason: answer.deny } }
  }
  if (answer.block !== undefined) return { decision: 'block', reason: answer.block }
  if (answer.context !== undefined) return { hookSpecificOutput: { hookEventName: eventName, additionalContext: answer.context } }
  return {}
}
