/**
 * Gemini CLI's hook events (its command hooks get each event's JSON on stdin) and its hook output
 * JSON: `hookSpecificOutput.additionalContext` for context (SessionStart, BeforeAgent, AfterTool),
 * `decision: "deny"` with a reason on BeforeTool, `decision: "block"` with a reason on AfterAgent.
 * A failed shell command has no event of its own: its exit code is in the tool's `llmContent`.
 */
import type { HookAnswer, HookEvent } from './events.js'

export type GeminiCliOutput = {
  decision?: 'deny' | 'block'
  reason?: string
  hookSpecificOutput?: { hookEventName: string; additionalContext: string }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** Whether a tool's answer reports a failure: an error field, or a non-zero "Exit Code:". */
function failed(response: unknown): boolean {
  if (response === null || typeof response !== 'object') return false
  const r = response as Record<string, unknown>
  if (r.error !== undefined && r.error !== null && r.error !== '') return true
  const code = /\bExit Code: (-?\d+)/.exec(str(r.llmContent))
  return code !== null && code[1] !== '0'
}

export function readGeminiCli(body: Record<string, unknown>): HookEvent {
  const session = str(body.session_id)
  switch (body.hook_event_name) {
    case 'SessionStart':
      return { kind: 'session_start', session, source: str(body.source) }
    case 'BeforeAgent':
      return { kind: 'prompt', session, prompt: str(body.prompt) }
    case 'BeforeTool':
      return { kind: 'pre_tool', session, name: str(body.tool_name), input: body.tool_input }
    case 'AfterTool':
      return { kind: 'post_tool', session, name: str(body.tool_name), input: body.tool_input, response: body.tool_response, error: failed(body.tool_response) }
    case 'AfterAgent':
      return { kind: 'stop', session, waiting: false }
    default:
      return { kind: 'other' }
  }
}

export function writeGeminiCli(eventName: string, answer: HookAnswer): GeminiCliOutput {
  if (answer.deny !== undefined) return { decision: 'deny', reason: answer.deny }
  if (answer.block !== undefined) return { decision: 'block', reason: answer.block }
  if (answer.context !== undefined) return { hookSpecificOutput: { hookEventName: eventName, additionalContext: answer.context } }
  return {}
}
