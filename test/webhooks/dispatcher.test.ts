import type { EventType } from '../../src/webhooks/outbox.js'
import { describe, expect, it } from 'vitest'
import { generateSecret } from '../../src/webhooks/sign.js'
import type { Receiver } from './receiver.js'
import { eachTest, setup, type WebhookEnv } from './fixtures.js'
import { verify } from './verify.js'

let rx: Receiver
let env: WebhookEnv
eachTest((r, e) => {
  rx = r
  env = e
})

const reminderData = { reminder: { id: 'rem_1', title: 'stand up' }, scheduled_for: '2026-11-22T09:00:00.000Z', late: false }

async function fire(agent = 'agt_a', type: EventType = 'reminder.triggered') {
  return env.outbox.enqueue(agent, type, reminderData, env.clock.now)
}

describe('dispatcher', () => {
  it('posts { type, timestamp, data } signed per Standard Webhooks and logs the attempt', async () => {
    const w = await env.service.create('agt_a', { url: rx.url })
    const { message_id } = await fire()
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(1)
    const rec = rx.received[0]!
    expect(rec.headers['webhook-id']).toBe(message_id)
    expect(rec.headers['webhook-timestamp']).toBe(String(Math.floor(env.clock.now / 1000)))
    expect(rec.headers['content-type']).toBe('application/json')
    expect(verify(w.secret, rec)).toEqual({ type: 'reminder.triggered', timestamp: '2026-11-22T09:00:00.000Z', data: reminderData })
    expect(() => verify(generateSecret(), rec)).toThrow()
    const log = await env.service.attempts('agt_a', w.id, { limit: 50 })
    expect(log.items).toEqual([expect.objectContaining({ message_id, event_type: 'reminder.triggered', attempt: 1, status_code: 204, error: null, next_attempt_at: null })])
    expect(await env.deliveryRows()).toEqual([{ state: 'succeeded', attempts: 1, next: null, claimed: null }])
  })

  it('retries on schedule with the same webhook-id and a fresh timestamp each attempt', async () => {
    const w = await env.service.create('agt_a', { url: rx.url })
    rx.responder = (n, res) => {
      res.statusCode = n < 2 ? 500 : 200
      res.end('ok')
    }
    const { message_id } = await fire()
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(1)
    // Not due before the first scheduled delay (5 s; jitter is pinned to 0 here).
    env.advance(4_000)
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(1)
    env.advance(1_000)
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(2)
    env.advance(300_000)
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(3)
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([message_id, message_id, message_id])
    const stamps = rx.received.map((r) => Number(r.headers['webhook-timestamp']))
    expect(new Set(stamps).size).toBe(3)
    for (const r of rx.received) expect(verify(w.secret, r)).toMatchObject({ type: 'reminder.triggered' })
    const log = (await env.service.attempts('agt_a', w.id, { limit: 50 })).items
    expect(log.map((a) => [a.attempt, a.status_code])).toEqual([
      [3, 200],
      [2, 500],
      [1, 500],
    ])
    expect(log[2]!.next_attempt_at).toBe(new Date(Date.parse(log[2]!.created_at) + 5_000).toISOString())
    expect((await env.service.get('agt_a', w.id)).failing_since).toBeNull()
  })

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    await env.service.create('agt_a', { url: rx.url })
    rx.responder = (_n, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${rx.port}/elsewhere` })
      res.end()
    }
    await fire()
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(1)
    expect((await env.deliveryRows())[0]).toMatchObject({ state: 'pending', attempts: 1 })
    const a = await env.db.get('SELECT status_code, error FROM webhook_attempts')
    expect(a).toEqual({ status_code: 302, error: 'redirect not followed' })
  })

  it('honours Retry-After in seconds and as an HTTP date', async () => {
    await env.service.create('agt_a', { url: rx.url })
    const t0 = env.clock.now
    rx.responder = (n, res) => {
      res.writeHead(n === 0 ? 429 : 503, {
        'retry-after': n === 0 ? '120' : new Date(env.clock.now + 3_600_000).toUTCString(),
      })
      res.end()
    }
    await fire()
    await env.dispatcher.runDue()
    expect((await env.deliveryRows())[0]!.next).toBe(t0 + 120_000)
    env.advance(119_000)
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(1)
    env.advance(1_000)
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(2)
    expect((await env.deliveryRows())[0]!.next).toBe(env.clock.now + 3_600_000)
  })

  it('410 Gone disables the endpoint, pauses its backlog, and re-enabling delivers it', async () => {
    const w = await env.service.create('agt_a', { url: rx.url })
    rx.responder = (n, res) => {
      res.statusCode = n === 0 ? 410 : 204
      res.end()
    }
    await fire()
    await env.dispatcher.runDue()
    const disabled = await env.service.get('agt_a', w.id)
    expect(disabled.status).toBe('disabled')
    expect(disabled.disabled_reason).toMatch(/410/)
    // New events are not queued for a disabled endpoint.
    expect((await fire()).deliveries).toBe(0)
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(1)
    expect(await env.deliveryRows()).toEqual([expect.objectContaining({ state: 'failed', attempts: 1 })])
    // Manual retry of that message after re-enabling.
    await env.service.update('agt_a', w.id, { status: 'active' })
    await env.service.retry('agt_a', w.id, rx.received[0]!.headers['webhook-id'] as string)
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(2)
    expect(rx.received[1]!.headers['webhook-id']).toBe(rx.received[0]!.headers['webhook-id'])
    expect((await env.deliveryRows())[0]).toMatchObject({ state: 'succeeded', attempts: 2 })
  })

  it('times out a receiver that never answers and schedules a retry', async () => {
    await env.close()
    env = await setup({ timeoutMs: 300 })
    await env.service.create('agt_a', { url: rx.url })
    rx.responder = () => {} // never answers
    await fire()
    const t = Date.now()
    await env.dispatcher.runDue()
    expect(Date.now() - t).toBeLessThan(5_000)
    const a = (await env.db.get<Record<string, unknown>>('SELECT status_code, error, next_attempt_at FROM webhook_attempts'))!
    expect(a.status_code).toBeNull()
    expect(a.error).toMatch(/timeout/)
    expect(a.next_attempt_at).toBe(env.clock.now + 5_000)
  })

  it('disables an endpoint after sustained failure and shows why', async () => {
    await env.close()
    env = await setup({ disableAfterHours: 1, retrySchedule: [1800, 1800, 1800, 1800] })
    const w = await env.service.create('agt_a', { url: rx.url })
    rx.responder = (_n, res) => {
      res.statusCode = 500
      res.end()
    }
    await fire()
    await fire()
    await env.dispatcher.runDue()
    expect(await env.service.get('agt_a', w.id)).toMatchObject({ status: 'active', failing_since: '2026-11-22T09:00:00.000Z' })
    env.advance(1_800_000)
    await env.dispatcher.runDue()
    expect((await env.service.get('agt_a', w.id)).status).toBe('active')
    env.advance(1_800_000)
    await env.dispatcher.runDue()
    const v = await env.service.get('agt_a', w.id)
    expect(v.status).toBe('disabled')
    expect(v.disabled_reason).toMatch(/failed since 2026-11-22T09:00:00.000Z/)
    expect((await env.deliveryRows()).map((r) => r.state)).toEqual(['paused', 'paused'])
    rx.responder = (_n, res) => {
      res.statusCode = 204
      res.end()
    }
    await env.service.update('agt_a', w.id, { status: 'active' })
    await env.dispatcher.runDue()
    expect((await env.deliveryRows()).map((r) => r.state)).toEqual(['succeeded', 'succeeded'])
  })

  it('marks a delivery failed once the schedule is exhausted', async () => {
    await env.close()
    env = await setup({ retrySchedule: [1] })
    await env.service.create('agt_a', { url: rx.url })
    rx.responder = (_n, res) => {
      res.statusCode = 500
      res.end()
    }
    await fire()
    await env.dispatcher.runDue()
    env.advance(2_000)
    await env.dispatcher.runDue()
    env.advance(100_000)
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(2)
    expect(await env.deliveryRows()).toEqual([{ state: 'failed', attempts: 2, next: null, claimed: null }])
  })

  it('filters by event type and fans out to every matching endpoint of the agent only', async () => {
    const all = await env.service.create('agt_a', { url: rx.url })
    const stalledOnly = await env.service.create('agt_a', { url: rx.url, event_types: ['session.stalled'] })
    await env.service.create('agt_b', { url: rx.url })
    expect((await fire('agt_a')).deliveries).toBe(1)
    expect((await fire('agt_a', 'session.stalled')).deliveries).toBe(2)
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(3)
    const ok = rx.received.filter((r) => {
      try {
        verify(all.secret, r)
        return true
      } catch {
        return verify(stalledOnly.secret, r) !== undefined
      }
    })
    expect(ok).toHaveLength(3)
  })

  it('signs with both secrets during a rotation, then only the new one', async () => {
    const w = await env.service.create('agt_a', { url: rx.url })
    const { secret } = await env.service.rotateSecret('agt_a', w.id)
    expect(secret).toMatch(/^whsec_/)
    expect(secret).not.toBe(w.secret)
    await fire()
    await env.dispatcher.runDue()
    const rec = rx.received[0]!
    expect(String(rec.headers['webhook-signature']).split(' ')).toHaveLength(2)
    expect(verify(w.secret, rec)).toBeTruthy()
    expect(verify(secret, rec)).toBeTruthy()
    env.advance(24 * 3_600_000)
    await fire()
    await env.dispatcher.runDue()
    const later = rx.received[1]!
    expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(verify(secret, later)).toBeTruthy()
    expect(() => verify(w.secret, later)).toThrow()
  })
})
