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
})
