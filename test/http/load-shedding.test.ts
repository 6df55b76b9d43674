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
    const otlp = await t.app.inject({ method: 'POST', url: '/v1/otlp/v1/traces', headers: { ...a.headers, 'content-type': 'application/x-protobuf' }, payload: Buffer.from(encodeRequest('traces', { resourceSpans: [] })) })
    expect(otlp.statusCode).toBe(503)
    expect(otlp.headers['content-type']).toBe('application/x-protobuf')
    expect(otlp.headers['retry-after']).toMatch(/^\d+$/)
    expect(decodeStatus(otlp.rawPayload).message).toMatch(/memory/)

    const usual = await buildTestApp()
    const b = await usual.createAgent()
    await new Promise((r) => setTimeout(r, 1_200))
    expect((await usual.app.inject({ method: 'POST', url: '/v1/sessions', headers: b.headers, payload: { goal: 'g' } })).statusCode).toBe(201)
  })
})
