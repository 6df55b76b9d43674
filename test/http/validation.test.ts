import { Ajv } from 'ajv'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { hasAtMostNodes, MAX_ALL_ERRORS_NODES } from '../../src/http/validation.js'
import { buildTestApp } from '../helpers.js'
import { createSession, dumpTables, GOAL } from './sessions-fixtures.js'

type Problem = { type: string; status: number; detail: string; errors?: { path: string; message: string }[] }

describe('request bodies are not coerced', () => {
  it('a number, boolean or null where a string belongs is a 400, and nothing is stored', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const before = await dumpTables(t)
    for (const goal of [5, true, null]) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal } })
      expect(res.statusCode, `goal ${JSON.stringify(goal)} → ${res.body}`).toBe(400)
      expect(res.json<Problem>().errors).toEqual([{ path: 'body/goal', message: 'must be string' }])
    }
    // An array element is not wrapped or converted either.
    const plan = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, plan: [1, 'x'] } })
    expect(plan.statusCode).toBe(400)
    expect(plan.json<Problem>().errors).toEqual([{ path: 'body/plan/0', message: 'must be string' }])
    const scalarPlan = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, plan: 'x' } })
    expect(scalarPlan.statusCode).toBe(400)
    expect(await dumpTables(t)).toEqual(before)
  })

  it('a string where a number or boolean belongs is a 400, and nothing changes', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const bad = [
      { goal: GOAL, config: { drift_threshold: '0.5' } },
      { goal: GOAL, config: { history_size: '10' } },
      { goal: GOAL, config: { llm_verify: 'true' } },
      { goal: GOAL, config: { llm_verify: 1 } },
    ]
    const before = await dumpTables(t)
    for (const payload of bad) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload })
      expect(res.statusCode, `${JSON.stringify(payload)} → ${res.body}`).toBe(400)
      expect(res.json<Problem>().errors?.[0]?.path).toMatch(/^body\/config\//)
    }
    expect(await dumpTables(t)).toEqual(before)
    const id = await createSession(t, a)
    const mid = await dumpTables(t)
    const turn = await t.app.inject({
      method: 'POST',
      url: `/v1/sessions/${id}/recitation`,
      headers: a.headers,
      payload: { iteration: '3', messages: [], force: 'true' },
    })
    expect(turn.statusCode).toBe(400)
    expect(
      turn
        .json<Problem>()
        .errors?.map((e) => e.path)
        .sort(),
    ).toEqual(['body/force', 'body/iteration'])
    expect(await dumpTables(t)).toEqual(mid)
  })

  it('query strings and path params are still coerced', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    expect((await t.app.inject({ url: '/v1/sessions?limit=10', headers: a.headers })).statusCode).toBe(200)
    expect((await t.app.inject({ url: `/v1/sessions/${id}/reminder?turn=3`, headers: a.headers })).statusCode).toBe(200)
    expect((await t.app.inject({ url: `/v1/sessions/${id}/drift/trend?window=5`, headers: a.headers })).statusCode).toBe(200)
    const bad = await t.app.inject({ url: '/v1/sessions?limit=ten', headers: a.headers })
    expect(bad.statusCode).toBe(400)
    expect(bad.json<Problem>().errors).toEqual([{ path: 'querystring/limit', message: 'must be integer' }])
  })

  it('a number too large for a double, or Infinity, is a 400 naming the field, not a 500', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    const cases: Array<[string, string]> = [
      ['/v1/sessions?limit=1e400', 'querystring/limit'],
      ['/v1/sessions?limit=Infinity', 'querystring/limit'],
      ['/v1/reminders?limit=-Infinity', 'querystring/limit'],
      [`/v1/sessions/${id}/steps?limit=1e400`, 'querystring/limit'],
      [`/v1/sessions/${id}/drift/trend?window=1e400`, 'querystring/window'],
      [`/v1/sessions/${id}/reminder?turn=1e400`, 'querystring/turn'],
      [`/v1/sessions/${id}/reminder?turn=1&drift_score=1e400`, 'querystring/drift_score'],
      [`/v1/sessions/${id}/recitation?iteration=1e400`, 'querystring/iteration'],
    ]
    for (const [url, path] of cases) {
      const res = await t.app.inject({ url, headers: a.headers })
      expect(res.statusCode, `${url} → ${res.body}`).toBe(400)
      expect(res.json<Problem>().errors).toEqual([{ path, message: 'must be a finite number' }])
    }
    expect((await t.app.inject({ url: '/v1/sessions?limit=2e1', headers: a.headers })).statusCode).toBe(200)
  })
})

describe('validators', () => {
  it('none is compiled at startup: each route part is compiled on its first request', async () => {
    const compile = vi.spyOn(Ajv.prototype, 'compile')
    try {
      const t = await buildTestApp()
      await t.app.ready()
      // The configuration's own schema is compiled as the configuration is read (config.ts).
      const routeParts = () => compile.mock.calls.filter(([schema]) => !JSON.stringify(schema).includes('GOALKEEPER_DB'))
      expect(routeParts()).toEqual([])
      const a = await t.createAgent()
      await createSession(t, a)
      // The body and the headers of POST /v1/sessions, and those of POST /v1/agents before it.
      expect(routeParts().length).toBeGreaterThan(0)
    } finally {
      compile.mockRestore()
    }
  })

  it('a route part is compiled once: never again while serving (valid or invalid requests)', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    const requests = async () => {
      for (const payload of [{ description: 'design the schema' }, { description: 5 }, { nope: true, description: [1, 2] }]) {
        await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: a.headers, payload })
        await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/drift-checks`, headers: a.headers, payload: { action: payload.description } })
      }
      for (const turn of ['3', 'x']) await t.app.inject({ url: `/v1/sessions/${id}/reminder?turn=${turn}`, headers: a.headers })
    }
    const compile = vi.spyOn(Ajv.prototype, 'compile')
    try {
      await requests()
      // The first round compiles each part it reaches (the all-errors body validators with the first refusal).
      expect(compile).toHaveBeenCalled()
      compile.mockClear()
      await requests()
      expect(compile).not.toHaveBeenCalled()
    } finally {
      compile.mockRestore()
    }
  })
})

describe('validation errors', () => {
  it('reports every error of the failing part, not just the first', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: a.headers,
      payload: { goal: 5, plan: 'x', bogus: 1, config: { drift_threshold: 2 } },
    })
    expect(res.statusCode).toBe(400)
    const body = res.json<Problem>()
    const paths = body.errors!.map((e) => e.path)
    expect(paths).toEqual(expect.arrayContaining(['body/goal', 'body/plan', 'body/bogus', 'body/config/drift_threshold']))
    expect(body.errors).toContainEqual({ path: 'body/bogus', message: 'is not a known field' })
    for (const p of ['body/goal', 'body/plan', 'body/bogus']) expect(body.detail).toContain(p)
  })

  it('caps the list at 20 entries for a body with thousands of errors', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const plan = Array.from({ length: 5000 }, (_, i) => i)
    const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, plan } })
    expect(res.statusCode).toBe(400)
    const body = res.json<Problem>()
    expect(body.errors).toHaveLength(20)
    expect(body.errors![0]).toEqual({ path: 'body/plan', message: expect.any(String) })
    expect(body.detail).toMatch(/and \d+ more\)\.$/)
    expect(res.body.length).toBeLessThan(4000)
  })

  it('a body too big to list every error reports its first one', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const plan = Array.from({ length: MAX_ALL_ERRORS_NODES * 5 }, (_, i) => i)
    const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: 5, plan } })
    expect(res.statusCode).toBe(400)
    expect(res.json<Problem>().errors).toHaveLength(1)
    // A small body still lists every error.
    const small = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: 5, plan: ['a', 1] } })
    expect(small.json<Problem>().errors?.map((e) => e.path)).toEqual(['body/goal', 'body/plan/1'])
  })

  it('hasAtMostNodes agrees with a full count of JSON values', () => {
    const count = (v: unknown): number =>
      1 + (Array.isArray(v) ? v.reduce((n: number, x) => n + count(x), 0) : v !== null && typeof v === 'object' ? Object.values(v).reduce((n: number, x) => n + count(x), 0) : 0)
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.nat(60), (v, limit) => {
        expect(hasAtMostNodes(v, limit)).toBe(count(v) <= limit)
      }),
      { numRuns: 500 },
    )
  })
})

describe('unknown routes are rate-limited', () => {
  it('429 with Retry-After once a caller spends the per-minute budget on 404s, any path', async () => {
    const { app } = await buildTestApp({ env: { GOALKEEPER_RATE_LIMIT_PER_MINUTE: '3' } })
    const urls = ['/v1/nothing-here', '/wp-login.php', '/.env']
    for (const url of urls) expect((await app.inject({ url, remoteAddress: '203.0.113.7' })).statusCode).toBe(404)
    const limited = await app.inject({ url: '/v1/nothing-else', remoteAddress: '203.0.113.7' })
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(limited.json<Problem>().type).toBe('urn:problem:too_many_requests')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    // Another address has its own budget, and operations endpoints stay unlimited.
    expect((await app.inject({ url: '/.env', remoteAddress: '203.0.113.8' })).statusCode).toBe(404)
    for (let i = 0; i < 5; i++) expect((await app.inject({ url: '/healthz', remoteAddress: '203.0.113.7' })).statusCode).toBe(200)
  })

  it('404s are never limited when rate limiting is off', async () => {
    const { app } = await buildTestApp({ env: { GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0' } })
    for (let i = 0; i < 20; i++) expect((await app.inject({ url: '/v1/nothing-here' })).statusCode).toBe(404)
  })
})

describe('NUL characters', () => {
  it('are a 400 naming the field, in a body or a query string, on either database, and store nothing', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const body = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: a.headers, payload: { url: 'http://example.com/hook', description: 'a\u0000b' } })
    expect(body.statusCode).toBe(400)
    expect(body.json().errors).toEqual([expect.objectContaining({ path: 'body/description' })])
    const query = await t.app.inject({ url: '/v1/reminders/search?q=a%00b', headers: a.headers })
    expect(query.statusCode).toBe(400)
    expect(query.json().errors).toEqual([expect.objectContaining({ path: 'querystring/q' })])
    expect(await t.db.get('SELECT count(*) AS n FROM webhooks')).toEqual({ n: 0 })
  })

  it("in a step's description, output or tool call become U+FFFD: a tool that printed a binary file's bytes is recorded as it came", async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const created = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: 'Fix the fixture loader' } })
    const url = `/v1/sessions/${created.json().id}/steps`
    const payload = { description: 'cat the \u0000fixture', output: 'PK\u0003\u0004\u0000\u0000', tool: { name: 'Bash', args: { command: "printf '\u0000'" } } }
    const res = await t.app.inject({ method: 'POST', url, headers: a.headers, payload })
    expect(res.statusCode).toBe(201)
    const log = (await t.app.inject({ url, headers: a.headers })).json().items[0]
    expect(log).toMatchObject({ description: 'cat the \uFFFDfixture', output: 'PK\u0003\u0004\uFFFD\uFFFD', tool: { args: { command: "printf '\uFFFD'" } } })
    const other = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: 'a\u0000b' } })
    expect(other.json().errors).toEqual([expect.objectContaining({ path: 'body/goal' })])
  })
})
