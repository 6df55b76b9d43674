import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'

describe('the request timeout', () => {
  it('a request still unanswered after GOALKEEPER_REQUEST_TIMEOUT_MS is answered 503 problem+json with Retry-After', async () => {
    const t = await buildTestApp({ env: { GOALKEEPER_REQUEST_TIMEOUT_MS: '200' } })
    // A handler slower than the timeout, whatever holds it up.
    t.app.get('/slow', { config: { auth: 'none' } }, async () => {
      await new Promise((r) => setTimeout(r, 5000))
      return { ok: true }
    })
    await t.app.ready()
    const started = performance.now()
    const res = await t.app.inject({ method: 'GET', url: '/slow' })
    expect(performance.now() - started).toBeLessThan(4000)
    expect(res.statusCode).toBe(503)
    expect(res.headers['content-type']).toContain('application/problem+json')
    expect(res.headers['retry-after']).toMatch(/^\d+$/)
    expect(res.json()).toMatchObject({ status: 503, type: 'urn:problem:unavailable', detail: expect.stringMatching(/request timeout/) })
  })

  it('a POST is answered 503 the same way, through its route; one that answers in time is not touched after', async () => {
    const t = await buildTestApp({ env: { GOALKEEPER_REQUEST_TIMEOUT_MS: '200' } })
    t.app.post('/slow', { config: { auth: 'none' } }, async (request) => {
      await new Promise((r) => setTimeout(r, (request.body as { ms: number }).ms))
      return { ok: true }
    })
    await t.app.ready()
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const url = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}/slow`
    const post = (ms: number) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ms }) })
    const slow = await post(2000)
    expect([slow.status, slow.headers.get('retry-after')]).toEqual([503, '2'])
    expect(await slow.json()).toMatchObject({ status: 503, type: 'urn:problem:unavailable' })
    const quick = await post(10)
    expect(quick.status).toBe(200)
    expect(await quick.json()).toEqual({ ok: true })
  })
})
