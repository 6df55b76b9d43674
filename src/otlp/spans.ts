/**
 * Spans of the GenAI semantic conventions as observed records: an `execute_tool` span is a step
 * (`gen_ai.tool.name`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, an ERROR status
 * or `error.type` for a failure); an inference span (`chat`, `text_completion`,
 * `generate_content`) is usage (`gen_ai.usage.input_tokens` + `output_tokens`) and carries the
 * latest user prompt of its input messages, as an `invoke_agent` span does; `goalkeeper.goal` on
 * any span or its resource is the goal. Every other span is left alone.
 */
import { toolOf, toolStep } from '../tool-calls/tool-step.js'
import { attrs, count, plain, structured, text, type Attrs } from './attributes.js'
import { CONVERSATION_MAX, conversationOf, goalRecord, lastUserPrompt, promptRecord, type Observed, type ReadOptions } from './observed.js'
import { toNumber, type Span, type TracesRequest } from './proto.js'

const INFERENCE = new Set(['chat', 'text_completion', 'generate_content'])
const AGENT = new Set(['invoke_agent', 'create_agent'])
/** Span status code ERROR. */
const STATUS_ERROR = 2

const hex = (id: Uint8Array | null | undefined): string => (id ? Buffer.from(id).toString('hex') : '')

export interface ReadResult {
  observed: Observed[]
  /** Items refused, and why (the partial-success message). */
  rejected: number
  reason: string
}

/** The span's operation: `gen_ai.operation.name`, else the first word of its name (`execute_tool get_weather`). */
function operationOf(a: Attrs, span: Span): string {
  return text(a, 'gen_ai.operation.name') ?? (span.name ?? '').split(' ')[0] ?? ''
}

export function readSpans(request: TracesRequest, options: ReadOptions): ReadResult {
  const out: Observed[] = []
  let rejected = 0
  let reason = ''
  const items: { span: Span; a: Attrs; trace: string }[] = []
  // A span without a conversation id takes its trace's, when another span of the trace has one here.
  const traceConversation = new Map<string, string>()
  for (const rs of request.resourceSpans ?? []) {
    const resource = rs.resource?.attributes
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        const a = attrs(resource, span.attributes)
        const trace = hex(span.traceId)
        const conversation = conversationOf(a)
        if (conversation !== undefined && trace !== '' && !traceConversation.has(trace)) traceConversation.set(trace, conversation)
        items.push({ span, a, trace })
      }
    }
  }
  for (const { span, a, trace } of items) {
    const spanId = hex(span.spanId)
    if (trace.length !== 32 || spanId.length !== 16) {
      rejected++
      reason = 'a span without a valid trace id and span id was rejected'
      continue
    }
    const conversation = conversationOf(a) ?? traceConversation.get(trace) ?? trace
    if (conversation.length > CONVERSATION_MAX) {
      rejected++
      reason = `a conversation id longer than ${CONVERSATION_MAX} characters was rejected`
      continue
    }
    const at = toNumber(span.startTimeUnixNano) / 1e6
    const key = `span:${trace}${spanId}`
    const add = (k: string, record: Observed['record']) => out.push({ conversation, key: k, at, record })
    const goal = goalRecord(a)
    if (goal !== undefined) add(goal.key, goal.record)
    const operation = operationOf(a, span)
    if (operation === 'execute_tool') {
      const name = text(a, 'gen_ai.tool.name') ?? (span.name ?? '').replace(/^execute_tool\s*/, '')
      const args = structured(a, 'gen_ai.tool.call.arguments')
      const error = span.status?.code === STATUS_ERROR || a.has('error.type')
      const result = plain(a.get('gen_ai.tool.call.result')) ?? (error ? (span.status?.message ?? text(a, 'error.type')) : undefined)
      const call = text(a, 'gen_ai.tool.call.id')
      // One tool call is one step, whichever span (or log event) reports it.
      add(call === undefined ? key : `call:${call}`, { kind: 'step', step: toolStep(toolOf(name || 'tool', args), result, error, options) })
    } else if (INFERENCE.has(operation) || AGENT.has(operation)) {
      const prompt = promptRecord(lastUserPrompt(a) ?? text(a, 'user_prompt'), a)
      if (prompt !== undefined) add(prompt.key, prompt.record)
      // An agent span's usage sums its inference spans': only these count.
      if (INFERENCE.has(operation)) {
        const tokens = (count(a, 'gen_ai.usage.input_tokens') ?? 0) + (count(a, 'gen_ai.usage.output_tokens') ?? 0)
        const response = text(a, 'gen_ai.response.id')
        if (tokens > 0) add(response === undefined ? key : `response:${response}`, { kind: 'usage', tokens })
      }
    }
  }
  return { observed: out, rejected, reason }
}
