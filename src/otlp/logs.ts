/**
 * Coding agents' log events as observed records: Claude Code's (`claude_code.user_prompt`,
 * `claude_code.tool_result`, `claude_code.api_request`) and Codex CLI's (`codex.user_prompt`,
 * `codex.tool_result`, `codex.sse_event` of a completed response), as the real binaries send them
 * (test/otlp/README.md); `goalkeeper.goal` on any record or its resource is the goal. Every other
 * log record is left alone.
 */
import { toolOf, toolStep } from '../tool-calls/tool-step.js'
import { attrs, count, plain, structured, text, type Attrs } from './attributes.js'
import { CONVERSATION_MAX, conversationOf, digest, goalRecord, promptRecord, type Observed, type ObservedRecord, type ReadOptions } from './observed.js'
import { toNumber, type LogRecord, type LogsRequest } from './proto.js'
import type { ReadResult } from './spans.js'

/** Its event name: Claude Code's is the body, Codex's the `event.name` attribute, newer SDKs' the `event_name` field. */
function eventOf(r: LogRecord, a: Attrs): string {
  const body = plain(r.body)
  if (typeof body === 'string' && /^[a-z_]+\.[a-z_.]+$/.test(body)) return body
  return text(a, 'event.name') ?? r.eventName ?? ''
}

/** Codex reports a shell command that exited non-zero as a success; its output says otherwise. */
const FAILED_EXIT = /\bProcess exited with code -?[1-9]\d*\b/

type Read = { key?: string; record: ObservedRecord } | undefined

/** The record an event makes: the key is the event's own unless the record names the call or response. */
function recordOf(event: string, a: Attrs, options: ReadOptions): Read {
  switch (event) {
    case 'claude_code.user_prompt':
    case 'codex.user_prompt':
      return promptRecord(text(a, 'prompt'), a)
    case 'claude_code.tool_result': {
      const error = text(a, 'success') === 'false'
      const args = structured(a, 'tool_input') ?? structured(a, 'tool_parameters')
      const tool = toolOf(text(a, 'tool_name') ?? 'tool', args)
      const call = text(a, 'tool_use_id')
      return { ...(call === undefined ? {} : { key: `call:${call}` }), record: { kind: 'step', step: toolStep(tool, error ? text(a, 'error') : undefined, error, options) } }
    }
    case 'codex.tool_result': {
      const output = text(a, 'output') ?? ''
      const error = text(a, 'success') === 'false' || FAILED_EXIT.test(output)
      const call = text(a, 'call_id')
      const tool = toolOf(text(a, 'tool_name') ?? 'tool', structured(a, 'arguments'))
      return { ...(call === undefined ? {} : { key: `call:${call}` }), record: { kind: 'step', step: toolStep(tool, output, error, options) } }
    }
    case 'claude_code.api_request': {
      // GenAI's input tokens include cached ones; Claude Code counts those apart.
      const tokens = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_creation_tokens'].reduce((sum, k) => sum + (count(a, k) ?? 0), 0)
      const cost = count(a, 'cost_usd')
      const response = text(a, 'request_id')
      return { ...(response === undefined ? {} : { key: `response:${response}` }), record: { kind: 'usage', tokens, ...(cost === undefined ? {} : { cost_usd: cost }) } }
    }
    case 'codex.sse_event': {
      if (text(a, 'event.kind') !== 'response.completed' || !a.has('input_token_count')) return undefined
      return { record: { kind: 'usage', tokens: (count(a, 'input_token_count') ?? 0) + (count(a, 'output_token_count') ?? 0) } }
    }
    default:
      return undefined
  }
}

/** A log record's own key: log records carry no id, and a retried export repeats them exactly. */
function keyOf(r: LogRecord): string {
  return `log:${digest(JSON.stringify([r.timeUnixNano, r.observedTimeUnixNano, r.eventName, r.body, r.attributes, r.traceId, r.spanId]))}`
}

export function readLogs(request: LogsRequest, options: ReadOptions): ReadResult {
  const out: Observed[] = []
  let rejected = 0
  let reason = ''
  for (const rl of request.resourceLogs ?? []) {
    const resource = rl.resource?.attributes
    for (const sl of rl.scopeLogs ?? []) {
      for (const r of sl.logRecords ?? []) {
        const a = attrs(resource, r.attributes)
        const read = recordOf(eventOf(r, a), a, options)
        const goal = goalRecord(a)
        if (read === undefined && goal === undefined) continue
        const trace = r.traceId ? Buffer.from(r.traceId).toString('hex') : ''
        const conversation = conversationOf(a) ?? (trace === '' ? undefined : trace)
        if (conversation === undefined || conversation.length > CONVERSATION_MAX) {
          rejected++
          reason = `an agent's log record without a conversation id (gen_ai.conversation.id, session.id or conversation.id) of at most ${CONVERSATION_MAX} characters was rejected`
          continue
        }
        // Codex leaves time_unix_nano 0 and sets the observed time.
        const at = toNumber(r.timeUnixNano) / 1e6 || toNumber(r.observedTimeUnixNano) / 1e6
        if (goal !== undefined) out.push({ conversation, key: goal.key, at, record: goal.record })
        if (read !== undefined) out.push({ conversation, key: read.key ?? keyOf(r), at, record: read.record })
      }
    }
  }
  return { observed: out, rejected, reason }
}
