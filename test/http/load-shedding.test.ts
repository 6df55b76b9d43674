import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { decodeStatus, encodeRequest } from '../../src/otlp/proto.js'
import { buildTestApp } from '../helpers.js'

describe('load shedding', () => {
  it('past its heap threshold the server answers 503 problem+json with Retry-After, before reading the body; below it, as usual', async () => {
    const t = await buildTestApp({ loadShedding: { maxHeapUsedBytes: 1 } })
    const a = await t.createAgent()
    // The heap in use is sampled once a second.
    await new Promise((r) => setTimeout(r, 1_200))
    const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: 'g' } })
    expect(res.statusCode).toBe(503)
    expect(res.headers['content-type']).toContain('application/problem+json')
    expect(res.headers['retry-after']).toMatch(/^\d+$/)
    expect(res.headers['x-request-id']).toBeDefined()
    expect(res.json()).toMatchObject({ status: 503, type: 'urn:problem:unavailable', detail: expect.stringMatching(/memory/) })
    expect(await t.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 0 })
    // An OTLP export is answered as the OTLP spec says: a Status in its own encoding, which exporters retry.
    const otlp = await t.app.inject({
      method: 'POST',
      url: '/v1/otlp/v1/traces',
      headers: { ...a.headers, 'content-type': 'application/x-protobuf' },
      payload: Buffer.from(encodeRequest('traces', { resourceSpans: [] })),
    })
    expect(otlp.statusCode).toBe(503)
    expect(otlp.headers['content-type']).toBe('application/x-protobuf')
    expect(otlp.headers['retry-after']).toMatch(/^\d+$/)
    expect(decodeStatus(otlp.rawPayload).message).toMatch(/memory/)

    const usual = await buildTestApp()
    const b = await usual.createAgent()
    await new Promise((r) => setTimeout(r, 1_200))
    expect((await usual.app.inject({ method: 'POST', url: '/v1/sessions', headers: b.headers, payload: { goal: 'g' } })).statusCode).toBe(201)
  })

  it('serves large bodies a budget at a time: one that finds no room waits, then is answered 503 with Retry-After unread; a share comes back when its request ends', async () => {
    // Room for one 80 KB body at a time, and a short wait.
    const t = await buildTestApp({ loadShedding: { largeBodyBudgetBytes: 100 * 1024, largeBodyWaitMs: 300 } })
    const a = await t.createAgent()
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const port = (t.app.server.address() as AddressInfo).port
    const body = (goal: string) => JSON.stringify({ goal, plan: Array.from({ length: 40 }, (_, i) => `step ${i} ${'x'.repeat(1990)}`) })
    type Answer = { status: number; retryAfter?: string; type?: string; body: string }
    /** A POST /v1/sessions whose body is sent up to `sent` bytes; `finish` sends the rest. */
    function post(payload: string, sent = payload.length): { answer: Promise<Answer>; finish: () => void; req: ClientRequest } {
      const req = httpRequest({
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/v1/sessions',
        headers: { ...a.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      })
      const answer = new Promise<Answer>((resolve, reject) => {
        req.on('error', reject)
        req.on('response', (res: IncomingMessage) => {
          let text = ''
          res.on('data', (d: Buffer) => (text += d.toString()))
          res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], type: res.headers['content-type'], body: text }))
        })
      })
      req.write(payload.slice(0, sent))
      if (sent === payload.length) req.end()
      return { answer, req, finish: () => req.end(payload.slice(sent)) }
    }
    const count = async () => ((await t.db.get('SELECT count(*) AS n FROM sessions')) as { n: number }).n

    // The first holds the budget while its body is still coming.
    const first = post(body('first'), 40_000)
    await new Promise((r) => setTimeout(r, 100))
    // A small request does not wait.
    expect((await post(JSON.stringify({ goal: 'small' })).answer).status).toBe(201)
    // A second large one finds no room: 503 after the wait, its body never read.
    const t0 = performance.now()
    const second = await post(body('second')).answer
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250)
    expect([second.status, second.retryAfter, second.type]).toEqual([503, '1', expect.stringContaining('application/problem+json')])
    expect(JSON.parse(second.body)).toMatchObject({ status: 503, type: 'urn:problem:unavailable' })
    expect(await count()).toBe(1)
    // One that arrives while the first is held waits and is served once the first is answered.
    const third = post(body('third'))
    await new Promise((r) => setTimeout(r, 50))
    first.finish()
    expect((await first.answer).status).toBe(201)
    expect((await third.answer).status).toBe(201)
    expect(await count()).toBe(3)

    // Clients that go away, one while it waits and one while it holds the budget, give their shares back.
    const holder = post(body('held'), 40_000)
    holder.answer.catch(() => undefined)
    await new Promise((r) => setTimeout(r, 100))
    const waiter = post(body('waiter'), 100)
    waiter.answer.catch(() => undefined)
    await new Promise((r) => setTimeout(r, 50))
    waiter.req.destroy()
    await new Promise((r) => setTimeout(r, 20))
    holder.req.destroy()
    await new Promise((r) => setTimeout(r, 100))
    expect((await post(body('after')).answer).status).toBe(201)
    expect(await count()).toBe(4)
  })
})
