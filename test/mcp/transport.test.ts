import { expect, it } from 'vitest'
import { BODY_LIMIT } from '../../src/http/app.js'
import { buildTestApp } from '../helpers.js'
import { connect, listen } from './client.js'

const ACCEPT = 'application/json, text/event-stream'
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}
const startSession = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'start_goal_session', arguments: { goal: 'Ship the release' } } })

/** One JSON-RPC message POSTed as an MCP client sends it. */
function post(url: URL, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify(body) })
}

it('answers initialize statelessly with JSON, naming the server and its tools capability', async () => {
  const t = await buildTestApp()
  const url = await listen(t)
  const a = await t.createAgent()
  const res = await post(url, initialize, a.headers)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.headers.get('mcp-session-id')).toBeNull()
  expect(res.headers.get('x-request-id')).toBeTruthy()
  const body = (await res.json()) as { result: { serverInfo: unknown; capabilities: unknown; instructions: string } }
  expect(body.result).toMatchObject({ serverInfo: { name: 'goalkeeper' }, capabilities: { tools: {} } })
  expect(body.result.instructions).toContain('record_step')
})

it('refuses a missing, wrong or admin key with the /v1 problem+json, before any MCP', async () => {
  const t = await buildTestApp()
  const url = await listen(t)
  for (const headers of [{}, { authorization: 'Bearer gk_not_a_key' }] as Record<string, string>[]) {
    const res = await post(url, initialize, headers)
    expect(res.status).toBe(401)
    expect(res.headers.get('content-type')).toContain('application/problem+json')
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
    expect(await res.json()).toMatchObject({ type: 'urn:problem:unauthorized', status: 401, instance: '/mcp' })
  }
  expect((await post(url, initialize, t.adminHeaders)).status).toBe(403)
  await expect(connect(url, {})).rejects.toThrow(/401/)
})

it('GET and DELETE are 405 (no sessions, no event stream), and the SDK client copes', async () => {
  const t = await buildTestApp()
  const url = await listen(t)
  const a = await t.createAgent()
  for (const method of ['GET', 'DELETE']) {
    const res = await fetch(url, { method, headers: { ...a.headers, accept: 'text/event-stream' } })
    expect(res.status, method).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
    expect(res.headers.get('content-type')).toContain('application/problem+json')
  }
  const client = await connect(url, a.headers)
  expect((await client.listTools()).tools).toHaveLength(11)
})

it('the /v1 body limit holds: a larger body is a 413 problem', async () => {
  const t = await buildTestApp()
  const url = await listen(t)
  const a = await t.createAgent()
  const big = { ...startSession(1), params: { name: 'record_step', arguments: { session_id: 'ses_x', description: 'x'.repeat(BODY_LIMIT) } } }
  const res = await post(url, big, a.headers)
  expect(res.status).toBe(413)
  expect(res.headers.get('content-type')).toContain('application/problem+json')
})

it('a tool call counts once against the rate limit: its REST call inside is not counted again', async () => {
  const t = await buildTestApp({ env: { GOALKEEPER_RATE_LIMIT_PER_MINUTE: '4' } })
  const url = await listen(t)
  const a = await t.createAgent()
  const remaining: (string | null)[] = []
  for (const message of [initialize, startSession(2), startSession(3), startSession(4)]) {
    const res = await post(url, message, a.headers)
    expect(res.status).toBe(200)
    const body = (await res.json()) as { result: { isError?: boolean } }
    expect(body.result.isError).toBeUndefined()
    remaining.push(res.headers.get('x-ratelimit-remaining'))
  }
  expect(remaining).toEqual(['3', '2', '1', '0'])
  expect((await t.app.services.sessions.list(a.id, {}, 50)).items).toHaveLength(3)

  const limited = await post(url, startSession(5), a.headers)
  expect(limited.status).toBe(429)
  expect(limited.headers.get('retry-after')).toBeTruthy()
  expect(limited.headers.get('content-type')).toContain('application/problem+json')
  expect((await t.app.services.sessions.list(a.id, {}, 50)).items).toHaveLength(3)
})

it('the self-call pass cannot be forged by a client', async () => {
  const t = await buildTestApp({ env: { GOALKEEPER_RATE_LIMIT_PER_MINUTE: '1' } })
  const a = await t.createAgent()
  const headers = { ...a.headers, 'x-goalkeeper-self-call': 'guess' }
  expect((await t.app.inject({ url: '/v1/sessions', headers })).statusCode).toBe(200)
  expect((await t.app.inject({ url: '/v1/sessions', headers })).statusCode).toBe(429)
})

it('is one operation in the OpenAPI document, pointing at the MCP spec', async () => {
  const t = await buildTestApp()
  const doc = (await t.app.inject('/openapi.json')).json()
  expect(Object.keys(doc.paths['/mcp'])).toEqual(['post'])
  expect(doc.paths['/mcp'].post).toMatchObject({ operationId: 'sendMcpMessage', tags: ['mcp'] })
  expect(doc.paths['/mcp'].post.externalDocs.url).toMatch(/^https:\/\/modelcontextprotocol\.io\/specification\/.+streamable-http$/)
})

it('a __proto__ or constructor.prototype key in tool arguments is dropped: the tool answers isError, the REST routes still refuse it', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const headers = { ...a.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  for (const args of ['{"goal":{"__proto__":{"x":1}}}', '{"goal":{"constructor":{"prototype":{"x":1}}}}']) {
    const payload = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"start_goal_session","arguments":${args}}}`
    const res = await t.app.inject({ method: 'POST', url: '/mcp', headers, payload })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().result).toMatchObject({ isError: true })
    expect(res.json().result.content[0].text).toMatch(/goal/)
  }
  // Elsewhere a poisoned body stays a 400 problem, as before.
  const rest = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: { ...a.headers, 'content-type': 'application/json' }, payload: '{"goal":"g","__proto__":{"x":1}}' })
  expect(rest.statusCode).toBe(400)
  expect(rest.json().type).toBe('urn:problem:invalid_json')
  expect(await t.db.get<{ n: number }>('SELECT count(*) AS n FROM sessions')).toEqual({ n: 0 })
})
