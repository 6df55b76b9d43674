import { gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { OtlpRepository } from '../../src/otlp/repository.js'
import { OTLP_BODY_LIMIT } from '../../src/otlp/routes.js'
import { decodeResponse, decodeStatus, encodeRequest } from '../../src/otlp/proto.js'
import { buildTestApp, subscribeToEvents, type TestAgent, type TestApp } from '../helpers.js'
import { ccEvent, chatSpan, logs, span, stored, toolSpan, traces } from './otlp-fixtures.js'

afterEach(() => vi.restoreAllMocks())

/** The OTLP receiver through app.inject, in both encodings; the applier runs as in production, after the answer. */

const GOAL = 'Refund invoice INV-1042 and email the customer a receipt'
const PROTOBUF = { 'content-type': 'application/x-protobuf' }
const JSON_TYPE = { 'content-type': 'application/json' }

async function setUp(env: Record<string, string> = {}) {
  const t = await buildTestApp({ env })
  const agent = await t.createAgent()
  return { t, agent }
}

function send(t: TestApp, agent: TestAgent, signal: 'traces' | 'logs', body: object, as: 'json' | 'protobuf' = 'json', headers: Record<string, string> = {}) {
  const payload = as === 'json' ? JSON.stringify(body) : Buffer.from(encodeRequest(signal, body))
  return t.app.inject({ method: 'POST', url: `/v1/otlp/v1/${signal}`, headers: { ...agent.headers, ...(as === 'json' ? JSON_TYPE : PROTOBUF), ...headers }, payload })
}

const turn = (conversation: string) =>
  traces([
    chatSpan(conversation, 0, GOAL, { input: 800, output: 60 }),
    toolSpan(conversation, 100, 'find_invoice', { invoice: 'INV-1042' }, { result: '{"amount": 120}', call: 'call_1' }),
    chatSpan(conversation, 200, GOAL, { input: 900, output: 40 }),
    toolSpan(conversation, 300, 'refund_invoice', { invoice: 'INV-1042', api_key: 'sk-live-not-for-storage' }, { error: 'card processor timeout', call: 'call_2' }),
  ])

describe('OTLP receiver', () => {
  it.each(['json', 'protobuf'] as const)('turns GenAI spans (%s) into a session: the first user prompt is the goal, tool calls are steps with usage and errors', async (as) => {
    const { t, agent } = await setUp()
    const res = await send(t, agent, 'traces', turn('conv-1'), as)
    expect(res.statusCode, res.body).toBe(200)
    // The answer is in the request's encoding: an empty response message is full success.
    expect(res.headers['content-type']).toContain(as === 'json' ? 'application/json' : 'application/x-protobuf')
    expect(as === 'json' ? res.json() : decodeResponse('traces', res.rawPayload)).toEqual({})

    const { session, steps } = await stored(t, agent, 'conv-1')
    expect(session).toMatchObject({ goal: GOAL, metadata: { source: 'otlp', service: 'billing-agent' } })
    expect(steps.map((s) => [s.tool?.name, s.error, s.tokens])).toEqual([
      ['find_invoice', false, 860],
      ['refund_invoice', true, 940],
    ])
    expect(steps[0]!.output).toBe('{"amount": 120}')
    expect(steps[1]).toMatchObject({ description: 'refund_invoice INV-1042', output: 'card processor timeout' })
    // Secrets never reach the database.
    expect(steps[1]!.tool!.args.api_key).toBe('[REDACTED]')
  })

  it('reads gzip bodies, and answers a body that does not decode with a 400 Status in the request encoding', async () => {
    const { t, agent } = await setUp()
    const zipped = await t.app.inject({
      method: 'POST',
      url: '/v1/otlp/v1/traces',
      headers: { ...agent.headers, ...PROTOBUF, 'content-encoding': 'gzip' },
      payload: gzipSync(encodeRequest('traces', turn('conv-gz'))),
    })
    expect(zipped.statusCode).toBe(200)
    expect((await stored(t, agent, 'conv-gz')).steps).toHaveLength(2)

    const garbage = await t.app.inject({ method: 'POST', url: '/v1/otlp/v1/traces', headers: { ...agent.headers, ...PROTOBUF }, payload: Buffer.from('not a protobuf message at all') })
    expect(garbage.statusCode).toBe(400)
    expect(garbage.headers['content-type']).toBe('application/x-protobuf')
    expect(decodeStatus(garbage.rawPayload).message).toMatch(/^The body is not an OTLP traces export request/)

    const badJson = await send(t, agent, 'traces', { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'not hex', spanId: '00' }] }] }] })
    expect(badJson.statusCode).toBe(400)
    expect(badJson.json()).toEqual({ message: expect.stringContaining('traceId must be a hex string') })
    const notGzip = await t.app.inject({ method: 'POST', url: '/v1/otlp/v1/logs', headers: { ...agent.headers, ...JSON_TYPE, 'content-encoding': 'gzip' }, payload: '{}' })
    expect(notGzip.statusCode).toBe(400)
    expect(notGzip.headers['content-type']).toContain('application/json')
  })

  it('answers 413 past the size limit after decompression, 401 without the agent key, 415 for another content type', async () => {
    const { t, agent } = await setUp()
    // A small gzip body that inflates past the limit.
    const bomb = gzipSync(Buffer.alloc(OTLP_BODY_LIMIT + 1024, 0x0a))
    expect(bomb.length).toBeLessThan(OTLP_BODY_LIMIT / 100)
    const big = await t.app.inject({ method: 'POST', url: '/v1/otlp/v1/traces', headers: { ...agent.headers, ...PROTOBUF, 'content-encoding': 'gzip' }, payload: bomb })
    expect(big.statusCode).toBe(413)
    expect(decodeStatus(big.rawPayload).message).toContain('after decompression')

    const anonymous = await t.app.inject({ method: 'POST', url: '/v1/otlp/v1/traces', headers: JSON_TYPE, payload: JSON.stringify(turn('conv-x')) })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json()).toEqual({ message: 'Missing or invalid API key.' })

    const text = await t.app.inject({ method: 'POST', url: '/v1/otlp/v1/traces', headers: { ...agent.headers, 'content-type': 'text/plain' }, payload: 'hello' })
    expect(text.statusCode).toBe(415)
    expect(text.headers['content-type']).toContain('application/problem+json')
  })

  it('past the rate limit answers 429 as a Status in the request encoding, with Retry-After (exporters retry it)', async () => {
    const { t, agent } = await setUp({ GOALKEEPER_RATE_LIMIT_PER_MINUTE: '1' })
    expect((await send(t, agent, 'traces', turn('conv-r'), 'protobuf')).statusCode).toBe(200)
    const limited = await send(t, agent, 'traces', turn('conv-r2'), 'protobuf')
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['content-type']).toBe('application/x-protobuf')
    expect(limited.headers['retry-after']).toMatch(/^\d+$/)
    expect(decodeStatus(limited.rawPayload).message).toContain('Rate limit')
  })

  it('a database that fails as a full disk or a lost connection is answered as the other routes answer it (507 / 503, Retry-After), as a Status', async () => {
    const { t, agent } = await setUp()
    const insert = vi.spyOn(OtlpRepository.prototype, 'insert')
    insert.mockRejectedValueOnce(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))
    const full = await send(t, agent, 'traces', turn('conv-f'), 'protobuf')
    expect(full.statusCode).toBe(507)
    expect(full.headers['retry-after']).toMatch(/^\d+$/)
    expect(decodeStatus(full.rawPayload).message).toContain('disk is full')
    insert.mockRejectedValueOnce(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
    const away = await send(t, agent, 'traces', turn('conv-f'))
    expect(away.statusCode).toBe(503)
    expect(away.headers['retry-after']).toMatch(/^\d+$/)
    expect(away.json().message).toContain('unavailable')
    // Retried once the database is back: stored and applied.
    expect((await send(t, agent, 'traces', turn('conv-f'))).statusCode).toBe(200)
    expect((await stored(t, agent, 'conv-f')).steps).toHaveLength(2)
  })

  it('takes the key as Claude Code sends it from OTEL_EXPORTER_OTLP_HEADERS (Bearer%20…, not decoded)', async () => {
    const { t, agent } = await setUp()
    const res = await send(t, agent, 'traces', turn('conv-h'), 'json', { authorization: `Bearer%20${agent.apiKey}` })
    expect(res.statusCode).toBe(200)
  })

  it('records a step once however often and in whatever order its export arrives', async () => {
    const { t, agent } = await setUp()
    const first = traces([chatSpan('conv-d', 0, GOAL), toolSpan('conv-d', 100, 'find_invoice', { invoice: 'INV-1042' })])
    const second = traces([toolSpan('conv-d', 300, 'refund_invoice', { invoice: 'INV-1042' }), toolSpan('conv-d', 200, 'send_receipt', { to: 'ops@example.com' })])
    expect((await send(t, agent, 'traces', first)).statusCode).toBe(200)
    // A retry of the first export after the second: nothing new.
    expect((await send(t, agent, 'traces', second, 'protobuf')).statusCode).toBe(200)
    expect((await send(t, agent, 'traces', first, 'protobuf')).statusCode).toBe(200)
    expect((await send(t, agent, 'traces', second)).statusCode).toBe(200)
    // Concurrent copies of one export.
    const third = traces([toolSpan('conv-d', 400, 'close_ticket', { ticket: 'T-9' })])
    await Promise.all([send(t, agent, 'traces', third), send(t, agent, 'traces', third, 'protobuf'), send(t, agent, 'traces', third)])
    const { steps } = await stored(t, agent, 'conv-d')
    // Within one export, by start time; across exports, in arrival order.
    expect(steps.map((s) => s.tool?.name)).toEqual(['find_invoice', 'send_receipt', 'refund_invoice', 'close_ticket'])
    const rows = await t.db.all<{ n: number | string }>("SELECT COUNT(*) AS n FROM otlp_records WHERE kind = 'step'")
    expect(Number(rows[0]!.n)).toBe(4)
  })

  it('a tool call reported by a span and by a log event is one step (its call id)', async () => {
    const { t, agent } = await setUp()
    await send(t, agent, 'traces', traces([chatSpan('conv-c', 0, GOAL), toolSpan('conv-c', 100, 'Bash', { command: 'npm test' }, { call: 'toolu_1' })]))
    await send(t, agent, 'logs', logs([ccEvent('conv-c', 100, 'tool_result', { tool_name: 'Bash', tool_use_id: 'toolu_1', success: 'true', tool_input: '{"command":"npm test"}' })]))
    expect((await stored(t, agent, 'conv-c')).steps).toHaveLength(1)
  })

  it("steps that arrive before their conversation's goal wait for it, and are applied in order once it comes", async () => {
    const { t, agent } = await setUp()
    // invoke_agent spans end last: an agent's tool spans can come before any span with the prompt.
    await send(t, agent, 'traces', traces([toolSpan('conv-w', 100, 'find_invoice', { invoice: 'INV-1042' }), toolSpan('conv-w', 200, 'refund_invoice', { invoice: 'INV-1042' })]))
    expect((await stored(t, agent, 'conv-w')).session).toBeUndefined()
    const root = span({
      name: 'invoke_agent billing',
      at: 0,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.conversation.id': 'conv-w',
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: GOAL }] }]),
      },
    })
    await send(t, agent, 'traces', traces([root]))
    const { session, steps } = await stored(t, agent, 'conv-w')
    expect(session?.goal).toBe(GOAL)
    expect(steps.map((s) => s.tool?.name)).toEqual(['find_invoice', 'refund_invoice'])
  })

  it('steps whose goal never comes are dropped after an hour, and a later prompt opens the session without them', async () => {
    let now = Date.parse('2026-11-27T09:00:00Z')
    const t = await buildTestApp({ clock: () => now })
    const agent = await t.createAgent()
    await send(t, agent, 'traces', traces([toolSpan('conv-n', 100, 'find_invoice', { invoice: 'INV-1042' })]))
    await t.app.services.otlp.applier.sweep()
    expect((await stored(t, agent, 'conv-n')).session).toBeUndefined()
    now += 3_600_001
    await t.app.services.otlp.applier.sweep()
    await t.app.services.otlp.applier.idle()
    expect(await t.db.all('SELECT kind, state FROM otlp_records')).toEqual([{ kind: 'step', state: 2 }])
    await send(t, agent, 'traces', traces([chatSpan('conv-n', 200, GOAL), toolSpan('conv-n', 300, 'refund_invoice', { invoice: 'INV-1042' })]))
    expect((await stored(t, agent, 'conv-n')).steps.map((s) => s.tool?.name)).toEqual(['refund_invoice'])
  })

  it('a goalkeeper.goal resource attribute is the goal; later prompts join it', async () => {
    const { t, agent } = await setUp()
    const body = traces([chatSpan('conv-g', 0, 'hi, start with the oldest invoice'), toolSpan('conv-g', 100, 'find_invoice', { invoice: 'INV-1' })], {
      'service.name': 'billing-agent',
      'goalkeeper.goal': 'Refund every invoice of November',
    })
    await send(t, agent, 'traces', body)
    const { session } = await stored(t, agent, 'conv-g')
    expect(session?.goal).toBe('Refund every invoice of November\n\nThen: hi, start with the oldest invoice')
  })

  it('rejects what cannot be read with partial_success counts, and keeps the rest', async () => {
    const { t, agent } = await setUp()
    const body = traces([chatSpan('conv-p', 0, GOAL), toolSpan('conv-p', 100, 'find_invoice', { invoice: 'INV-1042' }), { ...toolSpan('conv-p', 200, 'x', {}), spanId: '' }])
    const res = await send(t, agent, 'traces', body, 'protobuf')
    expect(res.statusCode).toBe(200)
    expect(decodeResponse('traces', res.rawPayload)).toEqual({ partialSuccess: { rejectedSpans: 1, errorMessage: 'a span without a valid trace id and span id was rejected' } })
    const json = await send(t, agent, 'logs', logs([ccEvent('', 0, 'tool_result', { tool_name: 'Bash' })]))
    expect(json.json()).toEqual({ partialSuccess: { rejectedLogRecords: '1', errorMessage: expect.stringContaining('without a conversation id') } })
    expect((await stored(t, agent, 'conv-p')).steps).toHaveLength(1)
  })

  it('Claude Code log events: the prompt opens the session, tool results are steps, api_request usage and cost count on the next step', async () => {
    const { t, agent } = await setUp()
    const s = '2f6c1a8e-4b1d-4d0e-9a57-3c2b8f1e7d90'
    await send(
      t,
      agent,
      'logs',
      logs([
        ccEvent(s, 0, 'user_prompt', { prompt: 'Make the flaky upload test pass reliably', 'prompt.id': 'p1' }),
        ccEvent(s, 10, 'api_request', { request_id: 'req_1', input_tokens: 1200, output_tokens: 30, cache_read_tokens: 5000, cache_creation_tokens: 0, cost_usd: 0.021 }),
        ccEvent(s, 20, 'tool_result', {
          tool_name: 'Bash',
          tool_use_id: 'toolu_1',
          success: 'false',
          error: 'Exit code 1',
          tool_input: '{"command":"npx vitest run test/upload.test.ts","description":"Run it"}',
        }),
        ccEvent(s, 30, 'api_request', { request_id: 'req_2', input_tokens: 1300, output_tokens: 20, cache_read_tokens: 0, cache_creation_tokens: 0, cost_usd: 0.01 }),
      ]),
      'protobuf',
    )
    const { session, steps } = await stored(t, agent, s)
    expect(session?.goal).toBe('Make the flaky upload test pass reliably')
    expect(steps).toHaveLength(1)
    expect(steps[0]).toMatchObject({ description: 'Bash: npx vitest run test/upload.test.ts', output: 'Exit code 1', error: true, tokens: 6230, cost_usd: 0.021 })
    // The usage after the last step waits for the next one.
    await send(t, agent, 'logs', logs([ccEvent(s, 40, 'tool_result', { tool_name: 'Read', tool_use_id: 'toolu_2', success: 'true', tool_input: '{"file_path":"test/upload.test.ts"}' })]))
    expect((await stored(t, agent, s)).steps[1]).toMatchObject({ description: 'Read test/upload.test.ts', tokens: 1320, cost_usd: 0.01 })
  })

  it("counts past what a step may report are cut to its limits, not refused by the database (a fuzz counterexample on PostgreSQL's integer)", async () => {
    const { t, agent } = await setUp()
    await send(
      t,
      agent,
      'logs',
      logs([
        ccEvent('conv-big', 0, 'user_prompt', { prompt: GOAL }),
        ccEvent('conv-big', 10, 'api_request', { request_id: 'req_big', input_tokens: 3_000_000_000, output_tokens: 1, cost_usd: 5_000_000.5 }),
        ccEvent('conv-big', 20, 'tool_result', { tool_name: 'Bash', tool_use_id: 'toolu_1', success: 'true', tool_input: '{"command":"ls"}' }),
      ]),
    )
    expect((await stored(t, agent, 'conv-big')).steps).toMatchObject([{ tokens: 1_000_000_000, cost_usd: 1_000_000 }])
  })

  it('verdicts go to the session events: a failing call repeated is a loop (webhook event, dashboard, the steps)', async () => {
    const { t, agent } = await setUp()
    await subscribeToEvents(t.db, agent.id)
    const calls = [0, 1, 2, 3].map((i) => toolSpan('conv-l', 100 + i * 100, 'get_weather', { city: 'Paris' }, { error: 'upstream timeout' }))
    await send(t, agent, 'traces', traces([chatSpan('conv-l', 0, 'What is the weather in Paris tomorrow?'), ...calls]))
    const { session, steps } = await stored(t, agent, 'conv-l')
    expect(steps.at(-1)!.verification.recommended_action).not.toBe('continue')
    expect(steps.some((s) => s.verification.loop !== undefined)).toBe(true)
    const events = await t.db.all<{ event_type: string; payload: string }>("SELECT event_type, payload FROM webhook_messages WHERE event_type = 'session.loop_detected'")
    expect(events.map((e) => (JSON.parse(e.payload) as { data: { session_id: string } }).data.session_id)).toContain(session!.id)
    const overview = await t.app.inject({ url: '/v1/sessions/overview', headers: agent.headers })
    expect(overview.statusCode).toBe(200)
    expect(overview.json<{ items: { session: { id: string }; last_action: string }[] }>().items.find((d) => d.session.id === session!.id)?.last_action).not.toBe('continue')
  })

  it("another agent's export with the same conversation id opens a session of its own", async () => {
    const { t, agent } = await setUp()
    const other = await t.createAgent('other')
    await send(t, agent, 'traces', turn('conv-i'))
    await send(t, other, 'traces', traces([chatSpan('conv-i', 0, 'Something else entirely'), toolSpan('conv-i', 100, 'noop', {})]))
    expect((await stored(t, agent, 'conv-i')).steps).toHaveLength(2)
    const theirs = await stored(t, other, 'conv-i')
    expect(theirs.session?.goal).toBe('Something else entirely')
    expect(theirs.steps).toHaveLength(1)
  })

  it('a session opened by hooks takes no steps from telemetry (the hooks record them)', async () => {
    const { t, agent } = await setUp()
    const s = '7a1c0de5-0000-4000-8000-000000000001'
    await t.app.inject({ method: 'POST', url: '/v1/hooks/claude-code', headers: agent.headers, payload: { session_id: s, hook_event_name: 'UserPromptSubmit', prompt: GOAL } })
    await send(t, agent, 'logs', logs([ccEvent(s, 20, 'tool_result', { tool_name: 'Bash', tool_use_id: 'toolu_1', success: 'true', tool_input: '{"command":"ls"}' })]))
    const { session, steps } = await stored(t, agent, s)
    expect(session?.metadata.source).toBe('claude-code')
    expect(steps).toHaveLength(0)
  })
})

describe('OTLP receiver under load', () => {
  it('past the backlog answers 429 with Retry-After, and every acknowledged record is applied once after a restart', async () => {
    // Each export below stores 3 records (a prompt, usage, a step).
    const { t, agent } = await setUp({ GOALKEEPER_OTLP_MAX_BACKLOG: '6' })
    // The applier stopped: nothing drains, as when exports outrun it.
    await t.app.services.otlp.applier.stop()
    const acknowledged: string[] = []
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const conversation = `conv-b${i}`
      const res = await send(t, agent, 'traces', traces([chatSpan(conversation, 0, `${GOAL} #${i}`), toolSpan(conversation, 100, 'find_invoice', { n: i })]), i % 2 === 0 ? 'json' : 'protobuf')
      statuses.push(res.statusCode)
      if (res.statusCode === 200) acknowledged.push(conversation)
      else {
        expect(res.headers['retry-after']).toBe('2')
        expect(i % 2 === 0 ? res.json().message : decodeStatus(res.rawPayload).message).toContain('waiting to be applied')
      }
    }
    expect(statuses).toEqual([200, 200, 429, 429])
    // A new process on the same database finds what the first acknowledged.
    const next = await buildTestApp({ handle: t.handle })
    await next.app.services.otlp.applier.sweep()
    for (const conversation of acknowledged) expect((await stored(next, agent, conversation)).steps).toHaveLength(1)
    await next.app.services.otlp.applier.sweep()
    for (const conversation of acknowledged) expect((await stored(next, agent, conversation)).steps).toHaveLength(1)
  })
})
