import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'

const PROBLEM = /^application\/problem\+json/

describe('agents (admin)', () => {
  it('creates an agent whose key then authenticates, and stores only its hash', async () => {
    const { app, handle, adminHeaders } = await buildTestApp()
    const res = await app.inject({ method: 'POST', url: '/v1/agents', headers: adminHeaders, payload: { name: 'planner' } })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(body).toEqual({ id: expect.stringMatching(/^agt_/), name: 'planner', api_key: expect.stringMatching(/^gk_[A-Za-z0-9_-]{43}$/), created_at: expect.any(String) })
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at)
    expect(await app.services.agents.authenticate(body.api_key)).toBe(body.id)
    const stored = await handle.db.all<{ key_hash: string }>('SELECT key_hash FROM api_keys')
    expect(stored).toHaveLength(1)
    expect(stored[0]!.key_hash).not.toContain(body.api_key.slice(3))
  })

  it('lists agents in pages with a cursor', async () => {
    const { app, adminHeaders, createAgent } = await buildTestApp()
    const ids = []
    for (let i = 0; i < 5; i++) ids.push((await createAgent(`a${i}`)).id)
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const url: string = `/v1/agents?limit=2${cursor ? `&cursor=${cursor}` : ''}`
      const res = await app.inject({ url, headers: adminHeaders })
      expect(res.statusCode).toBe(200)
      const page = res.json() as { items: { id: string }[]; next_cursor: string | null }
      seen.push(...page.items.map((a) => a.id))
      cursor = page.next_cursor
      pages++
    } while (cursor)
    expect(pages).toBe(3)
    expect(seen).toEqual([...ids].sort())
    const all = (await app.inject({ url: '/v1/agents', headers: adminHeaders })).json()
    expect(all.items).toHaveLength(5)
    expect(all.next_cursor).toBeNull()
  })

  it('issues extra keys, revokes one, and deleting the agent removes its keys', async () => {
    const { app, handle, adminHeaders, createAgent } = await buildTestApp()
    const a = await createAgent('a')
    const res = await app.inject({ method: 'POST', url: `/v1/agents/${a.id}/keys`, headers: adminHeaders })
    expect(res.statusCode).toBe(201)
    const extra = res.json() as { id: string; api_key: string }
    expect(await app.services.agents.authenticate(extra.api_key)).toBe(a.id)
    expect(await app.services.agents.authenticate(a.apiKey)).toBe(a.id)

    const revoke = await app.inject({ method: 'DELETE', url: `/v1/agents/${a.id}/keys/${extra.id}`, headers: adminHeaders })
    expect(revoke.statusCode).toBe(204)
    expect(revoke.body).toBe('')
    expect(await app.services.agents.authenticate(extra.api_key)).toBeUndefined()
    const again = await app.inject({ method: 'DELETE', url: `/v1/agents/${a.id}/keys/${extra.id}`, headers: adminHeaders })
    expect(again.statusCode).toBe(404)

    expect((await app.inject({ method: 'DELETE', url: `/v1/agents/${a.id}`, headers: adminHeaders })).statusCode).toBe(204)
    expect(await handle.db.get('SELECT count(*) AS n FROM api_keys')).toEqual({ n: 0 })
    expect(await app.services.agents.authenticate(a.apiKey)).toBeUndefined()
  })

  it('answers 404 problem+json for unknown agents', async () => {
    const { app, adminHeaders } = await buildTestApp()
    for (const [method, url] of [
      ['DELETE', '/v1/agents/agt_nope'],
      ['POST', '/v1/agents/agt_nope/keys'],
      ['DELETE', '/v1/agents/agt_nope/keys/key_nope'],
    ] as const) {
      const res = await app.inject({ method, url, headers: adminHeaders })
      expect(res.statusCode, `${method} ${url}`).toBe(404)
      expect(res.headers['content-type']).toMatch(PROBLEM)
      expect(res.json()).toMatchObject({ status: 404, type: 'urn:problem:not_found', instance: url })
    }
  })

  it("does not let one agent's key revoke another agent's key", async () => {
    const { app, adminHeaders, createAgent } = await buildTestApp()
    const a = await createAgent('a')
    const b = await createAgent('b')
    const bKey = (await app.inject({ method: 'POST', url: `/v1/agents/${b.id}/keys`, headers: adminHeaders })).json()
    // Wrong owner in the path: not found, and B's key survives.
    const res = await app.inject({ method: 'DELETE', url: `/v1/agents/${a.id}/keys/${bKey.id}`, headers: adminHeaders })
    expect(res.statusCode).toBe(404)
    expect(await app.services.agents.authenticate(bKey.api_key)).toBe(b.id)
    // And agent keys cannot reach the admin routes at all.
    for (const [method, url] of [
      ['GET', '/v1/agents'],
      ['DELETE', `/v1/agents/${b.id}`],
      ['POST', `/v1/agents/${b.id}/keys`],
    ] as const) {
      const r = await app.inject({ method, url, headers: a.headers })
      expect(r.statusCode, `${method} ${url}`).toBe(403)
    }
    expect(await app.services.agents.count()).toBe(2)
  })
})

describe('admin auth', () => {
  it('answers 401 without a valid token and 403 with an agent key', async () => {
    const { app, createAgent } = await buildTestApp()
    const a = await createAgent('a')
    const cases: [Record<string, string>, number][] = [
      [{}, 401],
      [{ authorization: 'Bearer wrong-admin-token-xxxxxxxx' }, 401],
      [{ authorization: 'Basic Zm9vOmJhcg==' }, 401],
      [{ authorization: `Bearer ${a.apiKey}` }, 403],
    ]
    for (const [headers, status] of cases) {
      const res = await app.inject({ url: '/v1/agents', headers })
      expect(res.statusCode, JSON.stringify(headers)).toBe(status)
      expect(res.headers['content-type']).toMatch(PROBLEM)
      expect(res.json()).toMatchObject({ status, title: expect.any(String), detail: expect.any(String), instance: '/v1/agents' })
    }
    expect((await app.inject({ url: '/v1/agents', headers: {} })).headers['www-authenticate']).toBe('Bearer')
  })

  it('answers 403 (401 without credentials) explaining how to enable admin routes when no admin token is configured', async () => {
    const { app } = await buildTestApp({ env: { GOALKEEPER_ADMIN_TOKEN: undefined } })
    const res = await app.inject({ method: 'POST', url: '/v1/agents', headers: { authorization: 'Bearer anything' }, payload: { name: 'x' } })
    expect(res.statusCode).toBe(403)
    expect(res.json().detail).toContain('GOALKEEPER_ADMIN_TOKEN')
    // No credentials at all is a 401, as on every other route, with the same explanation.
    const bare = await app.inject({ url: '/v1/agents' })
    expect(bare.statusCode).toBe(401)
    expect(bare.headers['www-authenticate']).toBe('Bearer')
    expect(bare.json().detail).toContain('GOALKEEPER_ADMIN_TOKEN')
  })
})

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and body, and 409s on a different body', async () => {
    const { app, adminHeaders } = await buildTestApp()
    const headers = { ...adminHeaders, 'idempotency-key': 'create-planner-1' }
    const first = await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: { name: 'planner' } })
    expect(first.statusCode).toBe(201)
    const replay = await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: { name: 'planner' } })
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.json()).toEqual(first.json())
    expect(await app.services.agents.count()).toBe(1)

    const other = await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: { name: 'someone else' } })
    expect(other.statusCode).toBe(409)
    expect(other.headers['content-type']).toMatch(PROBLEM)
    expect(other.json()).toMatchObject({ status: 409, type: 'urn:problem:conflict' })

    const fresh = await app.inject({ method: 'POST', url: '/v1/agents', headers: { ...adminHeaders, 'idempotency-key': 'k2' }, payload: { name: 'planner' } })
    expect(fresh.json().id).not.toBe(first.json().id)
    expect(await app.services.agents.count()).toBe(2)
  })

  it('does not store failures, expires after 24 h, and prunes old rows', async () => {
    let now = Date.parse('2026-11-22T09:00:00.000Z')
    const { app, handle, adminHeaders } = await buildTestApp({ clock: () => now })
    const headers = { ...adminHeaders, 'idempotency-key': 'k' }
    expect((await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: {} })).statusCode).toBe(400)
    const ok = await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: { name: 'a' } })
    expect(ok.statusCode).toBe(201)
    expect(ok.headers['idempotent-replayed']).toBeUndefined()

    now += 24 * 3600 * 1000 + 1
    const later = await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: { name: 'a' } })
    expect(later.statusCode).toBe(201)
    expect(later.json().id).not.toBe(ok.json().id)

    now += 24 * 3600 * 1000 + 1
    expect(await app.services.idempotency.prune()).toBe(1)
    expect(await handle.db.get('SELECT count(*) AS n FROM idempotency_keys')).toEqual({ n: 0 })
  })

  it('answers 409 to a concurrent duplicate while the first request is still running', async () => {
    const { app, createAgent } = await buildTestApp()
    const a = await createAgent('a')
    let runs = 0
    app.post('/v1/slow-create', { config: { auth: 'agent', idempotent: true } }, async (request, reply) => {
      runs++
      await new Promise((r) => setTimeout(r, 50))
      // An idempotent route runs its write in the request's unit of work, which stores the record.
      return reply.code(201).send(await request.uow.run(async () => ({ id: `thing_${runs}` })))
    })
    const headers = { ...a.headers, 'idempotency-key': 'same' }
    const [first, second] = await Promise.all([
      app.inject({ method: 'POST', url: '/v1/slow-create', headers, payload: { x: 1 } }),
      app.inject({ method: 'POST', url: '/v1/slow-create', headers, payload: { x: 1 } }),
    ])
    expect([first.statusCode, second.statusCode].sort()).toEqual([201, 409])
    expect(runs).toBe(1)
    // Once finished, the same key replays, scoped to this agent only.
    const replay = await app.inject({ method: 'POST', url: '/v1/slow-create', headers, payload: { x: 1 } })
    expect(replay.json()).toEqual({ id: 'thing_1' })
    const b = await createAgent('b')
    const other = await app.inject({ method: 'POST', url: '/v1/slow-create', headers: { ...b.headers, 'idempotency-key': 'same' }, payload: { x: 1 } })
    expect(other.json()).toEqual({ id: 'thing_2' })
  })
})
