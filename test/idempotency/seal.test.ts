import { describe, expect, it } from 'vitest'
import { Sealer } from '../../src/idempotency/service.js'
import { buildTestApp } from '../helpers.js'

type Row = Record<string, unknown>

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

  it('keeps one client key apart between two agents', async () => {
    const { app, createAgent } = await buildTestApp()
    const a = await createAgent('a')
    const b = await createAgent('b')
    const body = { goal: 'Ship the billing report by Friday' }
    const send = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/v1/sessions', headers: { ...headers, 'idempotency-key': 'same-key' }, payload: body })
    const fromA = await send(a.headers)
    const fromB = await send(b.headers)
    expect(fromA.statusCode).toBe(201)
    expect(fromB.statusCode).toBe(201)
    expect(fromB.headers['idempotent-replayed']).toBeUndefined()
    expect(fromB.json().id).not.toBe(fromA.json().id)
    const againA = await send(a.headers)
    expect(againA.payload).toBe(fromA.payload)
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
