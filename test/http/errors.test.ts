import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'

const PROBLEM = /^application\/problem\+json/

/** A problem+json body as the tests read it. */
type ProblemBody = { type: string; title: string; status: number; detail: string; instance: string; errors?: Array<{ path: string; message: string }>; [k: string]: unknown }

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }, status: number): ProblemBody {
  expect(res.statusCode).toBe(status)
  expect(res.headers['content-type']).toMatch(PROBLEM)
  const body = res.json()
  expect(body).toMatchObject({ type: expect.stringMatching(/^urn:problem:/), title: expect.any(String), status, detail: expect.any(String), instance: expect.any(String) })
  return body as ProblemBody
}

describe('problem+json errors', () => {
  it('400 with errors[] for a missing field, an unknown field and a bad query value', async () => {
    const { app, adminHeaders } = await buildTestApp()
    const missing = expectProblem(await app.inject({ method: 'POST', url: '/v1/agents', headers: adminHeaders, payload: {} }), 400)
    expect(missing.errors).toEqual([{ path: 'body/name', message: expect.stringContaining('required') }])
    const unknown = expectProblem(await app.inject({ method: 'POST', url: '/v1/agents', headers: adminHeaders, payload: { name: 'a', nmae: 'typo' } }), 400)
    expect(unknown.errors).toEqual([{ path: 'body/nmae', message: 'is not a known field' }])
    const query = expectProblem(await app.inject({ url: '/v1/agents?limit=500', headers: adminHeaders }), 400)
    expect(query.errors).toEqual([{ path: 'querystring/limit', message: expect.any(String) }])
    const param = expectProblem(await app.inject({ method: 'DELETE', url: '/v1/agents/not-an-id', headers: adminHeaders }), 400)
    expect(param.errors?.[0]?.path).toBe('params/agent_id')
  })

  it('400 for malformed JSON and for a wrongly typed field', async () => {
    const { app, adminHeaders } = await buildTestApp()
    const headers = { ...adminHeaders, 'content-type': 'application/json' }
    const bad = expectProblem(await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: '{"name":' }), 400)
    expect(bad.type).toBe('urn:problem:invalid_json')
    expectProblem(await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: '{"name": {"x": 1}}' }), 400)
  })

  it('415 for a body that is not JSON says which content-type to send', async () => {
    const { app, adminHeaders } = await buildTestApp()
    // What curl -d sends without -H 'content-type: application/json'.
    const headers = { ...adminHeaders, 'content-type': 'application/x-www-form-urlencoded' }
    const res = expectProblem(await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: '{"name":"a"}' }), 415)
    expect(res.type).toBe('urn:problem:unsupported_media_type')
    expect(res.detail).toContain('content-type: application/json')
  })

  it('413 for a body over 1 MB', async () => {
    const { app, adminHeaders } = await buildTestApp()
    const res = await app.inject({ method: 'POST', url: '/v1/agents', headers: adminHeaders, payload: { name: 'x'.repeat(1024 * 1024) } })
    expect(expectProblem(res, 413).type).toBe('urn:problem:payload_too_large')
  })

  it('404 for an unknown route, with or without a key', async () => {
    const { app, createAgent } = await buildTestApp()
    const a = await createAgent('a')
    expectProblem(await app.inject({ url: '/nope?x=1' }), 404)
    const body = expectProblem(await app.inject({ method: 'PATCH', url: '/v1/nothing-here', headers: a.headers }), 404)
    expect(body.instance).toBe('/v1/nothing-here')
  })

  it('400 and 414 from the router itself (bad percent-encoding, over-long path segment) are problem+json too', async () => {
    const { app, createAgent, adminHeaders } = await buildTestApp()
    const a = await createAgent('a')
    // Fuzz counterexample: POST /v1/reminders/%E0%A4%A/complete answered Fastify's own application/json.
    const bad = expectProblem(await app.inject({ method: 'POST', url: '/v1/reminders/%E0%A4%A/complete', headers: a.headers }), 400)
    expect(bad).toMatchObject({ type: 'urn:problem:bad_request', instance: '/v1/reminders/%E0%A4%A/complete' })
    expectProblem(await app.inject({ method: 'DELETE', url: '/v1/agents/%zz', headers: adminHeaders }), 400)
    const long = expectProblem(await app.inject({ url: `/v1/webhooks/${'a'.repeat(5000)}`, headers: a.headers }), 414)
    expect(long.type).toBe('urn:problem:uri_too_long')
  })

  it('500 hides the details', async () => {
    const { app } = await buildTestApp()
    app.get('/boom', { config: { auth: 'none' } }, async () => {
      throw new Error('secret internals')
    })
    const body = expectProblem(await app.inject({ url: '/boom' }), 500)
    expect(JSON.stringify(body)).not.toContain('secret')
  })

  it('429 with Retry-After once an API key spends its per-minute budget, per key', async () => {
    const { app, createAgent } = await buildTestApp({ env: { GOALKEEPER_RATE_LIMIT_PER_MINUTE: '3' } })
    // A stand-in agent route (the resource routes arrive in later slices).
    app.get('/v1/whoami', { config: { auth: 'agent' } }, async (request) => ({ agent_id: request.agentId }))
    const a = await createAgent('a')
    const b = await createAgent('b')
    for (let i = 0; i < 3; i++) {
      const ok = await app.inject({ url: '/v1/whoami', headers: a.headers })
      expect(ok.json()).toEqual({ agent_id: a.id })
    }
    const limited = await app.inject({ url: '/v1/whoami', headers: a.headers })
    const body = expectProblem(limited, 429)
    expect(body.type).toBe('urn:problem:too_many_requests')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    // B has its own budget; operations endpoints are never limited.
    expect((await app.inject({ url: '/v1/whoami', headers: b.headers })).json()).toEqual({ agent_id: b.id })
    for (let i = 0; i < 5; i++) expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200)
  })

  it('agent routes need an agent key: 401 without one, 403 with the admin token', async () => {
    const { app, adminHeaders } = await buildTestApp()
    app.get('/v1/whoami', { config: { auth: 'agent' } }, async (request) => ({ agent_id: request.agentId }))
    expectProblem(await app.inject({ url: '/v1/whoami' }), 401)
    expectProblem(await app.inject({ url: '/v1/whoami', headers: { authorization: 'Bearer gk_forged' } }), 401)
    expectProblem(await app.inject({ url: '/v1/whoami', headers: adminHeaders }), 403)
  })

  it('rate limiting is off when the limit is 0', async () => {
    const { app, adminHeaders } = await buildTestApp({ env: { GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0' } })
    for (let i = 0; i < 20; i++) expect((await app.inject({ url: '/v1/agents', headers: adminHeaders })).statusCode).toBe(200)
  })
})
