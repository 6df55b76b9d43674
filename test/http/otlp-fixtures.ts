/** OTLP/JSON export requests for the receiver's tests, as an instrumented agent or Claude Code sends them. */
import type { TestAgent, TestApp } from '../helpers.js'

type Value = string | number | boolean
const kv = (key: string, value: Value) => ({
  key,
  value: typeof value === 'boolean' ? { boolValue: value } : typeof value === 'number' ? (Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value }) : { stringValue: value },
})
const attributes = (a: Record<string, Value>) => Object.entries(a).map(([k, v]) => kv(k, v))

const TRACE = '5b8efff798038103d269b633813fc60c'
let spanSeq = 0x1000
/** Nanoseconds since the epoch, as OTLP/JSON's decimal string, `ms` past a fixed instant. */
const nanos = (ms: number) => String(BigInt(1_764_237_600_000 + ms) * 1_000_000n)

export interface SpanSpec {
  name?: string
  attributes: Record<string, Value>
  /** Start, ms past the fixture's instant. */
  at: number
  error?: string
  spanId?: string
  traceId?: string
}

export function span(s: SpanSpec) {
  return {
    traceId: s.traceId ?? TRACE,
    spanId: s.spanId ?? (spanSeq++).toString(16).padStart(16, '0'),
    name: s.name ?? String(s.attributes['gen_ai.operation.name'] ?? 'work'),
    kind: 1,
    startTimeUnixNano: nanos(s.at),
    endTimeUnixNano: nanos(s.at + 5),
    attributes: attributes(s.attributes),
    status: s.error === undefined ? {} : { code: 2, message: s.error },
  }
}

/** An execute_tool span of the GenAI conventions. */
export const toolSpan = (conversation: string, at: number, name: string, args: object, o: { result?: string; error?: string; call?: string } = {}) =>
  span({
    name: `execute_tool ${name}`,
    at,
    ...(o.error === undefined ? {} : { error: o.error }),
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.conversation.id': conversation,
      'gen_ai.tool.name': name,
      'gen_ai.tool.call.arguments': JSON.stringify(args),
      ...(o.result === undefined ? {} : { 'gen_ai.tool.call.result': o.result }),
      ...(o.call === undefined ? {} : { 'gen_ai.tool.call.id': o.call }),
    },
  })

/** A chat span whose input ends with the user's `prompt`, with its usage. */
export const chatSpan = (conversation: string, at: number, prompt: string, tokens = { input: 800, output: 60 }) =>
  span({
    name: 'chat gpt-4.1',
    at,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.conversation.id': conversation,
      'gen_ai.input.messages': JSON.stringify([
        { role: 'system', parts: [{ type: 'text', content: 'You are a billing agent.' }] },
        { role: 'user', parts: [{ type: 'text', content: prompt }] },
      ]),
      'gen_ai.usage.input_tokens': tokens.input,
      'gen_ai.usage.output_tokens': tokens.output,
    },
  })

export const traces = (spans: object[], resource: Record<string, Value> = { 'service.name': 'billing-agent' }) => ({
  resourceSpans: [{ resource: { attributes: attributes(resource) }, scopeSpans: [{ scope: { name: 'agent' }, spans }] }],
})

/** A log record as Claude Code sends it: the event name as the body, `session.id` on the record. */
export const ccEvent = (session: string, at: number, event: string, a: Record<string, Value>) => ({
  timeUnixNano: nanos(at),
  observedTimeUnixNano: nanos(at),
  body: { stringValue: `claude_code.${event}` },
  attributes: attributes({ 'session.id': session, 'event.name': event, ...a }),
})

export const logs = (records: object[], resource: Record<string, Value> = { 'service.name': 'claude-code' }) => ({
  resourceLogs: [{ resource: { attributes: attributes(resource) }, scopeLogs: [{ scope: { name: 'com.anthropic.claude_code.events' }, logRecords: records }] }],
})

export interface StoredStep {
  step_number: number
  description: string
  output: string
  error?: boolean
  tokens?: number
  cost_usd?: number
  tool?: { name: string; args: Record<string, unknown> }
  verification: { recommended_action: string; loop?: unknown }
}

/** The agent's session for `external` and its steps, once the applier has nothing left to do. */
export async function stored(t: TestApp, agent: TestAgent, external: string) {
  await t.app.services.otlp.applier.idle()
  const list = await t.app.inject({ url: `/v1/sessions?external_id=${encodeURIComponent(external)}`, headers: agent.headers })
  const session = list.json<{ items: { id: string; goal: string; metadata: Record<string, unknown> }[] }>().items[0]
  if (session === undefined) return { session, steps: [] as StoredStep[] }
  const res = await t.app.inject({ url: `/v1/sessions/${session.id}/steps`, headers: agent.headers })
  return { session, steps: res.json<{ items: StoredStep[] }>().items }
}
