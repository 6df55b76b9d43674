import fc from 'fast-check'
import { expect, it } from 'vitest'
import { decodeStatus, encodeRequest } from '../../src/otlp/proto.js'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { fuzzParameters } from './fuzz-arbitraries.js'

/**
 * Fuzz of the OTLP receiver: random bytes, and OTLP-shaped exports whose attributes (the ones
 * goalkeeper reads among others) hold any value. Never a 5xx; a refused body stores nothing; what
 * is taken is applied without a failure.
 */

const READ_KEYS = [
  'gen_ai.operation.name',
  'gen_ai.conversation.id',
  'session.id',
  'conversation.id',
  'gen_ai.tool.name',
  'gen_ai.tool.call.id',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
  'gen_ai.input.messages',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.response.id',
  'goalkeeper.goal',
  'error.type',
  'user_prompt',
  'gen_ai.prompt.0.role',
  'gen_ai.prompt.0.content',
  'event.name',
  'prompt',
  'tool_name',
  'tool_input',
  'tool_use_id',
  'success',
  'error',
  'cost_usd',
  'input_tokens',
  'request_id',
  'arguments',
  'output',
  'call_id',
]
const OPERATIONS = ['execute_tool', 'chat', 'invoke_agent', 'text_completion', 'claude_code.tool_result', 'codex.tool_result', 'claude_code.api_request', 'codex.user_prompt']

const anyValue: fc.Arbitrary<object> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.record({
      stringValue: fc.oneof(
        fc.string(),
        fc.constantFrom(...OPERATIONS),
        fc.constantFrom('{"a":', '[{"role":"user","parts":[{"type":"text","content":"x\u0000"}]}]', '{"command":"ls"}', 'true', 'false', '\ud800', '<REDACTED>'),
      ),
    }),
    fc.record({ intValue: fc.oneof(fc.integer(), fc.constantFrom('9223372036854775807', '-9223372036854775808')) }),
    fc.record({ doubleValue: fc.oneof(fc.double(), fc.constantFrom(1e308, -0)) }),
    fc.record({ boolValue: fc.boolean() }),
    fc.record({ bytesValue: fc.base64String({ maxLength: 12 }) }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie('value'), { maxLength: 3 }) }) }),
    fc.record({ kvlistValue: fc.record({ values: fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: tie('value') }), { maxLength: 3 }) }) }),
  ),
})).value
const str = (v: fc.Arbitrary<string>) => v.map((stringValue) => ({ stringValue }))
const randomAttributes = fc.array(fc.record({ key: fc.oneof(fc.constantFrom(...READ_KEYS), fc.string({ maxLength: 10 })), value: anyValue }), { maxLength: 8 })
/** Mostly what an agent sends (an operation or event, a conversation, a prompt, a tool, usage), then anything, overriding some of it. */
const attributes = fc
  .tuple(
    fc.record(
      {
        'gen_ai.operation.name': str(fc.constantFrom('execute_tool', 'chat', 'invoke_agent')),
        'gen_ai.conversation.id': str(fc.constantFrom('c1', 'c2', 'c3')),
        'session.id': str(fc.constantFrom('c1', 'c2')),
        'event.name': str(fc.constantFrom('codex.tool_result', 'codex.user_prompt', 'codex.sse_event')),
        'gen_ai.input.messages': str(fc.string().map((content) => JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `Fix ${content}` }] }]))),
        prompt: str(fc.string().map((p) => `Fix ${p}`)),
        'gen_ai.tool.name': str(fc.string({ maxLength: 8 })),
        tool_name: str(fc.string({ maxLength: 8 })),
        'gen_ai.tool.call.arguments': str(fc.json()),
        arguments: str(fc.json()),
        'gen_ai.usage.input_tokens': fc.integer({ min: 0, max: 10_000 }).map((intValue) => ({ intValue })),
        'event.kind': str(fc.constant('response.completed')),
        input_token_count: str(fc.integer().map(String)),
        'goalkeeper.goal': str(fc.string()),
      },
      { requiredKeys: [] },
    ),
    randomAttributes,
  )
  .map(([core, extra]) => [...Object.entries(core).map(([key, value]) => ({ key, value })), ...extra])
const hex = (bytes: number) => fc.oneof({ arbitrary: fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex')), weight: 8 }, fc.constantFrom('', 'zz', 'abc'))
const time = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String), fc.integer({ min: -5, max: 5 }))
const span = fc.record(
  { traceId: hex(16), spanId: hex(8), name: fc.oneof(fc.constantFrom(...OPERATIONS), fc.string()), startTimeUnixNano: time, attributes, status: fc.record({ code: fc.integer({ min: 0, max: 3 }) }) },
  { requiredKeys: [] },
)
const record = fc.record({ timeUnixNano: time, observedTimeUnixNano: time, body: anyValue, attributes, traceId: hex(16), eventName: fc.string({ maxLength: 20 }) }, { requiredKeys: [] })
const resource = fc.record({ attributes: randomAttributes })
const tracesBody = fc.record({ resourceSpans: fc.array(fc.record({ resource, scopeSpans: fc.array(fc.record({ spans: fc.array(span, { maxLength: 6 }) }), { maxLength: 2 }) }), { maxLength: 2 }) })
const logsBody = fc.record({ resourceLogs: fc.array(fc.record({ resource, scopeLogs: fc.array(fc.record({ logRecords: fc.array(record, { maxLength: 6 }) }), { maxLength: 2 }) }), { maxLength: 2 }) })

async function records(t: TestApp): Promise<number> {
  return Number((await t.db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM otlp_records'))!.n)
}

async function post(t: TestApp, a: TestAgent, signal: string, contentType: string, payload: string | Buffer) {
  const before = await records(t)
  const res = await t.app.inject({ method: 'POST', url: `/v1/otlp/v1/${signal}`, headers: { ...a.headers, 'content-type': contentType }, payload })
  expect(res.statusCode, res.body).toBeLessThan(500)
  expect([200, 400]).toContain(res.statusCode)
  if (res.statusCode === 400) {
    expect(await records(t)).toBe(before)
    if (contentType === 'application/x-protobuf') expect(decodeStatus(res.rawPayload).message).toMatch(/\S/)
    else expect(res.json<{ message: string }>().message).toMatch(/\S/)
  }
  return res
}

async function noFailures(t: TestApp): Promise<void> {
  await t.app.services.otlp.applier.idle()
  const failed = (await t.app.metrics.otlpApplied.get()).values.filter((v) => v.labels.outcome === 'failed')
  expect(failed).toEqual([])
}

it('random bytes as a protobuf body: 200 or a 400 Status, nothing stored on a 400', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  await fc.assert(
    fc.asyncProperty(fc.constantFrom('traces', 'logs'), fc.uint8Array({ maxLength: 300 }), async (signal, bytes) => {
      await post(t, a, signal, 'application/x-protobuf', Buffer.from(bytes))
    }),
    fuzzParameters(150),
  )
  await noFailures(t)
}, 120_000)

it('OTLP exports with any attribute values, as JSON and protobuf: never a 5xx, applied without a failure', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        tracesBody.map((b) => ['traces', b] as const),
        logsBody.map((b) => ['logs', b] as const),
      ),
      fc.boolean(),
      async ([signal, body], binary) => {
        let payload: string | Buffer = JSON.stringify(body)
        if (binary) {
          try {
            payload = Buffer.from(encodeRequest(signal, body))
          } catch {
            // A body the encoder refuses (bad hex) goes as JSON.
            binary = false
          }
        }
        await post(t, a, signal, binary ? 'application/x-protobuf' : 'application/json', payload)
      },
    ),
    fuzzParameters(150),
  )
  await noFailures(t)
  // Most of them were read as something (not all ignored).
  const kinds = await t.db.all<{ kind: string }>('SELECT DISTINCT kind FROM otlp_records WHERE state = 1')
  expect(kinds.map((k) => k.kind).sort()).toEqual(['goal', 'prompt', 'step', 'usage'])
}, 180_000)
