import type { EventType } from '../../src/webhooks/outbox.js'
import { describe, expect, it } from 'vitest'
import type { Receiver } from './receiver.js'
import { eachTest, setup, type WebhookEnv } from './fixtures.js'
import { backend } from '../helpers.js'
import { DeliveryRepository } from '../../src/webhooks/delivery-repository.js'

let rx: Receiver
let env: WebhookEnv
eachTest((r, e) => {
  rx = r
  env = e
})

async function fire(agent = 'agt_a', type: EventType = 'reminder.triggered') {
  return env.outbox.enqueue(agent, type, { reminder: { id: 'rem_1' } }, env.clock.now)
}

/** Claims: what a dead process or a shutdown leaves behind, and who delivers it next. */
describe('dispatcher claims', () => {
  /** The deliveries as another process (one that dies) claims and records them, on the default lease. */
  const deadProcess = () => new DeliveryRepository(env.db, env.settings, env.settings.timeoutMs + 30_000, () => 0.5)
  // One process owns a SQLite file, so at start every claim is a dead process's.
  it.skipIf(backend === 'postgres')('a claim left by a crashed process is released at start and delivered once', async () => {
    await env.service.create('agt_a', { url: rx.url })
    await fire()
    expect(await deadProcess().claim(env.clock.now, 10)).toHaveLength(1)
    // Claimed: invisible to further claims until the lease ends.
    expect(await deadProcess().claim(env.clock.now, 10)).toHaveLength(0)
    expect(await env.dispatcher.recover()).toBe(1)
    await env.dispatcher.runDue()
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(1)
  })

  it('a claim whose lease ran out goes out again, once, and its late claimer records nothing', async () => {
    await env.service.create('agt_a', { url: rx.url })
    const { message_id } = await fire()
    const [dead] = await deadProcess().claim(env.clock.now, 10)
    expect(dead).toMatchObject({ messageId: message_id, attempts: 0 })
    await env.dispatcher.runDue()
    expect(rx.received).toHaveLength(0)
    // The default lease: the timeout plus 30 s.
    env.advance(env.settings.timeoutMs + 30_000)
    await env.dispatcher.runDue()
    await env.dispatcher.runDue()
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([message_id])
    await deadProcess().record(dead!, {
      id: 'evt_late',
      outcome: { kind: 'retry', retryAfterMs: null },
      statusCode: 500,
      error: 'HTTP 500',
      durationMs: 1,
      createdAt: env.clock.now,
      nowMs: env.clock.now,
    })
    expect(await env.deliveryRows()).toEqual([{ state: 'succeeded', attempts: 1, next: null, claimed: null }])
    expect(await env.count('webhook_attempts')).toBe(1)
  })

  it('stop() lets in-flight deliveries finish and claims nothing new', async () => {
    await env.service.create('agt_a', { url: rx.url })
    rx.responder = (_n, res) => {
      setTimeout(() => {
        res.statusCode = 204
        res.end()
      }, 200)
    }
    await fire()
    expect(await env.dispatcher.pump()).toBe(1)
    await fire()
    await env.dispatcher.stop(5_000)
    expect(await env.dispatcher.pump()).toBe(0)
    expect(rx.received).toHaveLength(1)
    expect((await env.deliveryRows()).map((r) => r.state).sort()).toEqual(['pending', 'succeeded'])
  })

  it('stop() past its grace aborts what is still in flight and gives the claim back, unrecorded', async () => {
    await env.service.create('agt_a', { url: rx.url })
    rx.responder = () => {} // never answers
    const { message_id } = await fire()
    expect(await env.dispatcher.pump()).toBe(1)
    await expect.poll(() => rx.received.length).toBe(1)
    await env.dispatcher.stop(50)
    expect(await env.deliveryRows()).toEqual([{ state: 'pending', attempts: 0, next: env.clock.now, claimed: null }])
    expect(await env.count('webhook_attempts')).toBe(0)
    // Due at once for the next dispatcher, with the same webhook-id.
    const next = (await setup({}, env.handle)).dispatcher
    rx.responder = (_n, res) => {
      res.statusCode = 204
      res.end()
    }
    await next.runDue()
    await next.stop()
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([message_id, message_id])
  })
})
