import { expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers.js'

/**
 * The request examples of the served document, sent as Swagger UI's "Try it out" sends them, in
 * the order a newcomer would: each must succeed, and the results must make sense for the task.
 */

interface Parameter {
  name: string
  in: string
  required?: boolean
  example?: unknown
  schema?: { default?: unknown }
}
interface Operation {
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { example?: unknown }> }
}
type Paths = Record<string, Record<string, Operation>>
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

const MINUTE = 60_000

function operations(paths: Paths): [string, Operation][] {
  return Object.entries(paths).flatMap(([path, ops]) => Object.entries(ops).map(([m, op]): [string, Operation] => [`${m.toUpperCase()} ${path}`, op]))
}

/** Sends `METHOD /path/{id}` with the document's body example and query examples; returns the JSON reply. */
function runner(t: TestApp, paths: Paths, ran: Set<string>) {
  return async (operation: string, ids: Record<string, string>, headers: Record<string, string>, status = 200) => {
    const [method, template] = operation.split(' ') as [Method, string]
    const op = paths[template]![method.toLowerCase()]!
    const query = new URLSearchParams()
    for (const p of op.parameters ?? []) if (p.in === 'query' && p.example !== undefined) query.set(p.name, String(p.example))
    const url = template.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!) + (query.size > 0 ? `?${query}` : '')
    const payload = op.requestBody?.content['application/json']?.example
    const res = await t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
    expect(res.statusCode, `${operation}: ${res.body}`).toBe(status)
    ran.add(operation)
    return res.json()
  }
}

it('every request body and every required query parameter without a default has an example', async () => {
  const { app } = await buildTestApp()
  await app.ready()
  const paths = (app.swagger() as unknown as { paths: Paths }).paths
  const missing = operations(paths).flatMap(([op, { requestBody, parameters = [] }]) => [
    ...(requestBody && requestBody.content['application/json']?.example === undefined ? [`${op} body`] : []),
    ...parameters.filter((p) => p.in === 'query' && p.required && p.schema?.default === undefined && p.example === undefined).map((p) => `${op} ?${p.name}`),
  ])
  expect(missing).toEqual([])
})

it('the examples run as is, in order, with sensible results', async () => {
  // example.com needs DNS to pass the private-address guard; this sandbox has none, so the guard is off.
  const t = await buildTestApp({ env: { GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } })
  await t.app.ready()
  const paths = (t.app.swagger() as unknown as { paths: Paths }).paths
  const ran = new Set<string>()
  const run = runner(t, paths, ran)

  const agent = await run('POST /v1/agents', {}, t.adminHeaders, 201)
  const headers = { authorization: `Bearer ${agent.api_key}` }

  const session = await run('POST /v1/sessions', {}, headers, 201)
  const id = session.id as string
  expect(session.config.drift_threshold).toBe(0.15)
  expect(session.plan).toHaveLength(3)
  await run('PATCH /v1/sessions/{id}', { id }, headers)
  const step = await run('POST /v1/sessions/{id}/steps', { id }, headers, 201)
  expect(step.verification).toMatchObject({ aligned: true, recommended_action: 'continue' })
  expect(step.drift.severity).toBe('none')
  const check = await run('POST /v1/sessions/{id}/drift-checks', { id }, headers)
  expect(check).toMatchObject({ drifting: false, severity: 'none' })
  expect((await run('POST /v1/sessions/{id}/pitfalls', { id }, headers)).pitfalls).toHaveLength(1)
  expect((await run('POST /v1/sessions/{id}/tried-approaches', { id }, headers)).tried_approaches).toHaveLength(1)
  await run('PUT /v1/sessions/{id}/context', { id }, headers)
  const reminder = await run('GET /v1/sessions/{id}/reminder', { id }, headers)
  expect(reminder.text).toContain('100 requests per minute')
  expect((await run('POST /v1/sessions/{id}/reminder', { id }, headers)).text).toBe(reminder.text)
  expect((await run('GET /v1/sessions/{id}/recitation', { id }, headers)).should_inject).toBe(true)
  const recited = await run('POST /v1/sessions/{id}/recitation', { id }, headers)
  expect(recited.injected).toBe(true)
  expect(recited.recitation.text).toContain('token-bucket rate limiter')
  expect(recited.recitation.token_estimate).toBeGreaterThan(20)
  await run('PUT /v1/sessions/{id}/goal', { id }, headers)
  expect((await run('PUT /v1/sessions/{id}/plan', { id }, headers)).plan).toHaveLength(4)
  expect((await run('PUT /v1/sessions/{id}/tools', { id }, headers)).tools).toContain('Edit')

  const created = await run('POST /v1/reminders', {}, headers, 201)
  const rem = created.id as string
  const firesIn = Date.parse(created.next_fire_at) - Date.now()
  expect(firesIn).toBeGreaterThan(0)
  expect(firesIn).toBeLessThanOrEqual(10 * MINUTE)
  await run('PATCH /v1/reminders/{id}', { id: rem }, headers)
  const found = await run('GET /v1/reminders/search', {}, headers)
  expect(found.items.map((x: { reminder: { id: string } }) => x.reminder.id)).toEqual([rem])
  const snoozed = await run('POST /v1/reminders/{id}/snooze', { id: rem }, headers)
  expect(snoozed.status).toBe('snoozed')
  await run('PUT /v1/settings', {}, headers)
  await run('POST /v1/turns', {}, headers)

  // A coding agent's first prompt opens a hook session; nothing is due yet, so nothing to add.
  expect(await run('POST /v1/hooks/claude-code', {}, headers)).toEqual({})
  expect(await run('POST /v1/hooks/codex', {}, headers)).toEqual({})
  expect(await run('POST /v1/hooks/gemini-cli', {}, headers)).toEqual({})
  const opened = (await run('GET /v1/sessions', {}, headers)).items.slice(-3)
  expect(opened.map((s: { external_id: string; metadata: { source: string } }) => [s.metadata.source, s.external_id])).toEqual([
    ['claude-code', '2f6c1a8e-4b1d-4d0e-9a57-3c2b8f1e7d90'],
    ['codex', '019a4b2c-7d1e-7f30-9c44-1b2e3d4f5a60'],
    ['gemini-cli', '6a0f3c2e-91b4-4f7d-8e65-2d3c4b5a6f70'],
  ])

  // An agent's OTLP export: accepted whole; its tool call becomes a step of the conversation's session.
  expect(await run('POST /v1/otlp/v1/traces', {}, headers)).toEqual({})
  expect(await run('POST /v1/otlp/v1/logs', {}, headers)).toEqual({})
  await t.app.services.otlp.applier.idle()
  const watched = (await run('GET /v1/sessions', {}, headers)).items.filter((s: { metadata: { source: string } }) => s.metadata.source === 'otlp')
  expect(watched.map((s: { goal: string }) => s.goal)).toEqual(['Refund invoice INV-1042 and email the customer a receipt', 'Make the flaky test in test/upload.test.ts pass reliably'])
  const hook = await run('POST /v1/webhooks', {}, headers, 201)
  await run('PATCH /v1/webhooks/{id}', { id: hook.id }, headers)

  // An MCP client's first message; the Accept header is the transport's, as any MCP client sends it.
  const mcp = await run('POST /mcp', {}, { ...headers, accept: 'application/json, text/event-stream' })
  expect(mcp.result.serverInfo.name).toBe('goalkeeper')

  // Every operation with an example was exercised above.
  const withExamples = operations(paths)
    .filter(([, op]) => op.requestBody !== undefined || (op.parameters ?? []).some((p) => p.in === 'query' && p.example !== undefined))
    .map(([op]) => op)
  expect(withExamples.filter((op) => !ran.has(op))).toEqual([])
})
