import { describe, expect, it } from 'vitest'
import { hashBody, Sealer } from '../../src/idempotency/service.js'
import { buildTestApp } from '../helpers.js'

type Row = Record<string, unknown>

const LEGACY_INSERT =
  'INSERT INTO idempotency_keys (scope, key, agent_id, method, path, body_hash, status, response_body, created_at) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)'

const everything = (rows: Row[]) => rows.map((r) => Object.values(r).join('\u0001')).join('\n')

describe('Idempotency-Key records are sealed', () => {
  it('keeps neither a created API key nor the client key readable in the table, and still replays byte for byte', async () => {
    const { app, handle, adminHeaders, createAgent } = await buildTestApp()
    const agent = await createAgent('planner')
    const clientKey = 'rotate-key-4e1f9c2a-planner'
    const headers = { ...adminHeaders, 'idempotency-key': clientKey }
    const first = await app.inject({ method: 'POST', url: `/v1/agents/${agent.id}/keys`, headers })
    expect(first.statusCode).toBe(201)
    const apiKey = first.json().api_key as string
    expect(apiKey).toMatch(/^gk_/)

    const stored = everything(await handle.db.all<Row>('SELECT * FROM idempotency_keys'))
    expect(stored).not.toBe('')
    expect(stored).not.toContain(apiKey)
    expect(stored).not.toContain(apiKey.slice(3, 20))
    expect(stored).not.toContain(clientKey)

    const replay = await app.inject({ method: 'POST', url: `/v1/agents/${agent.id}/keys`, headers })
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.payload).toBe(first.payload)
  })

  it('seals records written before sealing on first use, and replays them', async () => {
    const first = await buildTestApp()
    const { handle } = first
    const legacyBody = '{"id":"agt_legacy0000000000000000000","name":"x","api_key":"gk_legacy_plaintext_secret"}'
    await handle.db.run(LEGACY_INSERT, ['admin', 'legacy-1', 'POST', '/v1/agents', hashBody({ name: 'x' }), 201, legacyBody, Date.now()])

    // A new app on the same database seals what it finds when it first looks.
    const second = await buildTestApp({ handle })
    const replay = await second.app.inject({
      method: 'POST',
      url: '/v1/agents',
      headers: { ...second.adminHeaders, 'idempotency-key': 'legacy-1' },
      payload: { name: 'x' },
    })
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.payload).toBe(legacyBody)
    expect(await second.app.services.agents.count()).toBe(0)
    const stored = everything(await handle.db.all<Row>('SELECT * FROM idempotency_keys'))
    expect(stored).not.toContain('legacy-1')
    expect(stored).not.toContain('gk_legacy_plaintext_secret')
  })

  it('keeps one client key apart between two agents', async () => {
    const { app, createAgent } = await buildTestApp()
    const a = await createAgent('a')
    const b = await createAgent('b')
    const body = { goal: 'Ship the billing report by Friday' }
    const send = (headers: Record<string, string>) =>
      app.inject({ method: 'POST', url: '/v1/sessions', headers: { ...headers, 'idempotency-key': 'same-key' }, payload: body })
    const fromA = await send(a.headers)
    const fromB = await send(b.headers)
    expect(fromA.statusCode).toBe(201)
    expect(fromB.statusCode).toBe(201)
    expect(fromB.headers['idempotent-replayed']).toBeUndefined()
    expect(fromB.json().id).not.toBe(fromA.json().id)
    const againA = await send(a.headers)
    expect(againA.payload).toBe(fromA.payload)
  })

  it('finds and seals a plain record another process wrote after the first pass', async () => {
    const { app, handle, adminHeaders } = await buildTestApp()
    const send = (key: string) => app.inject({ method: 'POST', url: '/v1/agents', headers: { ...adminHeaders, 'idempotency-key': key }, payload: { name: 'x' } })
    expect((await send('fresh-1')).statusCode).toBe(201) // the one-time pass has run
    const legacyBody = '{"id":"agt_late0000000000000000000000","name":"x","api_key":"gk_late_plaintext_secret"}'
    await handle.db.run(LEGACY_INSERT, ['admin', 'late-1', 'POST', '/v1/agents', hashBody({ name: 'x' }), 201, legacyBody, Date.now()])
    const replay = await send('late-1')
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.payload).toBe(legacyBody)
    expect(everything(await handle.db.all<Row>('SELECT * FROM idempotency_keys'))).not.toContain('gk_late_plaintext_secret')
    expect((await send('late-1')).payload).toBe(legacyBody)
  })

  it('keys both digests with GOALKEEPER_IDEMPOTENCY_SECRET when it is set', async () => {
    const secret = 'idempotency-secret-0123456789'
    const { app, handle, adminHeaders } = await buildTestApp({ env: { GOALKEEPER_IDEMPOTENCY_SECRET: secret } })
    const headers = { ...adminHeaders, 'idempotency-key': 'k-1' }
    const first = await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: { name: 'x' } })
    const { key } = (await handle.db.get<{ key: string }>('SELECT key FROM idempotency_keys'))!
    expect(key).toBe(new Sealer(secret).lookupDigest('admin', 'k-1'))
    expect(key).not.toBe(new Sealer().lookupDigest('admin', 'k-1'))
    expect((await app.inject({ method: 'POST', url: '/v1/agents', headers, payload: { name: 'x' } })).payload).toBe(first.payload)

    // Another secret finds nothing: its digest of the same key differs.
    const other = await buildTestApp({ handle, env: { GOALKEEPER_IDEMPOTENCY_SECRET: 'another-secret-0123456789' } })
    const fresh = await other.app.inject({ method: 'POST', url: '/v1/agents', headers: { ...other.adminHeaders, 'idempotency-key': 'k-1' }, payload: { name: 'x' } })
    expect(fresh.headers['idempotent-replayed']).toBeUndefined()
    expect(fresh.json().id).not.toBe(first.json().id)
  })
})
