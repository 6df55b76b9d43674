import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { DEFAULT_DELIVERY_SETTINGS } from '../../src/webhooks/retry-policy.js'
import { Receiver } from '../webhooks/receiver.js'
import { verify } from '../webhooks/verify.js'
import { buildTestApp } from '../helpers.js'

let rx: Receiver
beforeEach(async () => {
  rx = await new Receiver().start()
})
afterEach(async () => rx.stop())

const PRIVATE_OK = { GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' }

describe('webhook routes', () => {
  it('creates (secret shown once), lists, tests with a signed delivery, and logs the attempt', async () => {
    const t = await buildTestApp({ env: PRIVATE_OK })
    const a = await t.createAgent()
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { ...a.headers, 'idempotency-key': 'k1' },
      payload: { url: rx.url, event_types: ['reminder.triggered'], description: 'main' },
    })
    expect(created.statusCode).toBe(201)
    const w = created.json()
    expect(w).toMatchObject({ id: expect.stringMatching(/^whk_/), url: rx.url, event_types: ['reminder.triggered'], status: 'active', secret: expect.stringMatching(/^whsec_/) })
    const replay = await t.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { ...a.headers, 'idempotency-key': 'k1' },
      payload: { url: rx.url, event_types: ['reminder.triggered'], description: 'main' },
    })
    expect(replay.json().id).toBe(w.id)
    expect((await t.app.inject({ url: '/v1/webhooks', headers: a.headers })).json().items).toHaveLength(1)
    const got = (await t.app.inject({ url: `/v1/webhooks/${w.id}`, headers: a.headers })).json()
    expect(got).not.toHaveProperty('secret')

    const test = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${w.id}/test`, headers: a.headers })
    expect(test.statusCode).toBe(202)
    const dispatcher = new Dispatcher({ db: t.db, settings: { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: true }, clock: Date.now })
    await dispatcher.runDue()
    await dispatcher.stop()
    expect(rx.received).toHaveLength(1)
    expect(verify(w.secret, rx.received[0]!)).toMatchObject({ type: 'webhook.test' })
    const log = (await t.app.inject({ url: `/v1/webhooks/${w.id}/deliveries`, headers: a.headers })).json()
    expect(log.items).toEqual([expect.objectContaining({ message_id: test.json().message_id, attempt: 1, status_code: 204, event_type: 'webhook.test' })])

    const retry = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${w.id}/deliveries/${test.json().message_id}/retry`, headers: a.headers })
    expect(retry.statusCode).toBe(202)
    const rot = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${w.id}/rotate-secret`, headers: a.headers })
    expect(rot.statusCode).toBe(200)
    expect(rot.json().secret).toMatch(/^whsec_/)
  })

  it('refuses private URLs with 422 problem+json when not allowed, including localhost', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    for (const url of [rx.url, `http://localhost:${rx.port}/hook`, 'http://[::ffff:127.0.0.1]/x', 'http://192.168.0.10/x']) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: a.headers, payload: { url } })
      expect([url, res.statusCode]).toEqual([url, 422])
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.json().detail).toMatch(/non-public address .*GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS=true/)
    }
    const bad = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: a.headers, payload: { url: 'https://8.8.8.8/x', event_types: ['nope'] } })
    expect(bad.statusCode).toBe(400)
  })

  it("hides one agent's webhooks from another (404 everywhere)", async () => {
    const t = await buildTestApp({ env: PRIVATE_OK })
    const a = await t.createAgent('a')
    const b = await t.createAgent('b')
    const w = (await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: a.headers, payload: { url: rx.url } })).json()
    const msg = (await t.app.inject({ method: 'POST', url: `/v1/webhooks/${w.id}/test`, headers: a.headers })).json().message_id
    const calls: [string, string, object?][] = [
      ['GET', `/v1/webhooks/${w.id}`],
      ['PATCH', `/v1/webhooks/${w.id}`, { description: 'x' }],
      ['DELETE', `/v1/webhooks/${w.id}`],
      ['POST', `/v1/webhooks/${w.id}/rotate-secret`],
      ['POST', `/v1/webhooks/${w.id}/test`],
      ['GET', `/v1/webhooks/${w.id}/deliveries`],
      ['POST', `/v1/webhooks/${w.id}/deliveries/${msg}/retry`],
    ]
    for (const [method, url, payload] of calls) {
      const res = await t.app.inject({ method: method as 'GET', url, headers: b.headers, ...(payload ? { payload } : {}) })
      expect([method, url, res.statusCode]).toEqual([method, url, 404])
    }
    expect((await t.app.inject({ url: '/v1/webhooks', headers: b.headers })).json().items).toEqual([])
  })

  it('re-enables a disabled endpoint through PATCH and deletes with 204', async () => {
    const t = await buildTestApp({ env: PRIVATE_OK })
    const a = await t.createAgent()
    const w = (await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: a.headers, payload: { url: rx.url } })).json()
    const off = await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${w.id}`, headers: a.headers, payload: { status: 'disabled' } })
    expect(off.json()).toMatchObject({ status: 'disabled', disabled_reason: expect.any(String) })
    const on = await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${w.id}`, headers: a.headers, payload: { status: 'active' } })
    expect(on.json()).toMatchObject({ status: 'active', disabled_reason: null })
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${w.id}`, headers: a.headers })).statusCode).toBe(204)
    expect((await t.app.inject({ url: `/v1/webhooks/${w.id}`, headers: a.headers })).statusCode).toBe(404)
  })
})
