import { Writable } from 'node:stream'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('x-request-id', () => {
  it('is generated when the request sends none, a new one each time', async () => {
    const { app } = await buildTestApp()
    const first = (await app.inject('/healthz')).headers['x-request-id']
    const second = (await app.inject('/healthz')).headers['x-request-id']
    expect(first).toMatch(UUID)
    expect(second).toMatch(UUID)
    expect(second).not.toBe(first)
  })

  it("is the request's own when it is printable and at most 200 characters, else a generated one", async () => {
    const { app, createAgent } = await buildTestApp()
    const a = await createAgent('a')
    const idOf = async (sent: string) => (await app.inject({ url: '/v1/sessions', headers: { ...a.headers, 'x-request-id': sent } })).headers['x-request-id']
    expect(await idOf('trace-4bf92f3577b34da6 / retry 2')).toBe('trace-4bf92f3577b34da6 / retry 2')
    expect(await idOf('x'.repeat(200))).toBe('x'.repeat(200))
    expect(await idOf('x'.repeat(201))).toMatch(UUID)
    expect(await idOf('a\tb')).toMatch(UUID)
  })

  it('is on problem+json error responses too, whichever layer answered', async () => {
    const { app, createAgent } = await buildTestApp({ env: { GOALKEEPER_RATE_LIMIT_PER_MINUTE: '1' } })
    const a = await createAgent('a')
    const cases = [
      { status: 401, req: { url: '/v1/sessions' } }, // auth
      { status: 400, req: { method: 'POST' as const, url: '/v1/sessions', headers: a.headers, payload: {} } }, // validation
      { status: 429, req: { url: '/v1/sessions', headers: a.headers } }, // rate limit (the request above spent the budget)
      { status: 404, req: { url: '/v2/nothing' } }, // no such route
      { status: 400, req: { method: 'POST' as const, url: '/v1/reminders/%E0%A4%A/complete', headers: a.headers } }, // router
    ]
    for (const [i, { status, req }] of cases.entries()) {
      const sent = `req-${i}`
      const res = await app.inject({ ...req, headers: { ...req.headers, 'x-request-id': sent } })
      expect(res.statusCode, req.url).toBe(status)
      expect(res.headers['content-type'], req.url).toMatch(/^application\/problem\+json/)
      expect(res.headers['x-request-id'], req.url).toBe(sent)
      expect((await app.inject(req)).headers['x-request-id'], req.url).toMatch(UUID)
    }
  })

  it("is the reqId of that request's log lines", async () => {
    const lines: Record<string, unknown>[] = []
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>)
        done()
      },
    })
    const { app } = await buildTestApp({ logger: pino({ level: 'info' }, sink) })
    app.get('/boom', { config: { auth: 'none' } }, async () => {
      throw new Error('broken')
    })
    const res = await app.inject({ url: '/boom', headers: { 'x-request-id': 'trace-77' } })
    expect(res.statusCode).toBe(500)
    expect(res.headers['x-request-id']).toBe('trace-77')
    const mine = lines.filter((l) => l.reqId === 'trace-77').map((l) => l.msg)
    expect(mine).toEqual(expect.arrayContaining(['incoming request', 'request failed', 'request completed']))

    const generated = (await app.inject('/healthz')).headers['x-request-id']
    expect(lines.filter((l) => l.reqId === generated).map((l) => l.msg)).toEqual(['incoming request', 'request completed'])
  })
})
