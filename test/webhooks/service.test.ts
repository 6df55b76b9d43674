import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AppError } from '../../src/errors.js'
import { setup, type WebhookEnv } from './fixtures.js'

let env: WebhookEnv
beforeEach(async () => {
  env = await setup()
})
afterEach(async () => env.close())

function statusOf(fn: () => unknown): Promise<number> {
  return Promise.resolve()
    .then(fn)
    .then(
      () => 200,
      (e: AppError) => e.status,
    )
}

describe('webhooks service', () => {
  it('stores an event only for agents with a subscription that wants it', async () => {
    const t = env.clock.now
    expect(await env.outbox.enqueue('agt_a', 'session.stalled', { session_id: 'ses_1' }, t)).toMatchObject({ deliveries: 0 })
    expect([await env.count('webhook_messages'), await env.count('webhook_deliveries')]).toEqual([0, 0])

    await env.service.create('agt_a', { url: 'http://127.0.0.1:9/h', event_types: ['reminder.triggered'] })
    expect((await env.outbox.enqueue('agt_a', 'session.stalled', { session_id: 'ses_1' }, t)).deliveries).toBe(0)
    expect((await env.outbox.enqueue('agt_b', 'reminder.triggered', {}, t)).deliveries).toBe(0)
    expect(await env.count('webhook_messages')).toBe(0)

    const sent = await env.outbox.enqueue('agt_a', 'reminder.triggered', { n: 1 }, t)
    expect(sent.deliveries).toBe(1)
    expect(await env.db.all('SELECT id, event_type FROM webhook_messages')).toEqual([{ id: sent.message_id, event_type: 'reminder.triggered' }])
    expect(await env.count('webhook_deliveries')).toBe(1)
  })

  it('creates with a whsec_ secret of at least 24 bytes that is never shown again', async () => {
    const w = await env.service.create('agt_a', { url: 'http://127.0.0.1:9/h', event_types: ['reminder.triggered'] })
    expect(w.id).toMatch(/^whk_/)
    expect(Buffer.from(w.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24)
    expect(w).toMatchObject({ status: 'active', event_types: ['reminder.triggered'], disabled_reason: null })
    expect(await env.service.get('agt_a', w.id)).not.toHaveProperty('secret')
    expect((await env.service.list('agt_a', { limit: 50 })).items[0]).not.toHaveProperty('secret')
  })

  it('pages the list with a cursor', async () => {
    for (let i = 0; i < 5; i++) {
      await env.service.create('agt_a', { url: `http://127.0.0.1:9/${i}` })
      env.advance(1)
    }
    const p1 = await env.service.list('agt_a', { limit: 2 })
    const p2 = await env.service.list('agt_a', { limit: 2, cursor: p1.next_cursor! })
    const p3 = await env.service.list('agt_a', { limit: 2, cursor: p2.next_cursor! })
    expect([...p1.items, ...p2.items, ...p3.items].map((w) => w.url)).toEqual([0, 1, 2, 3, 4].map((i) => `http://127.0.0.1:9/${i}`))
    expect(p3.next_cursor).toBeNull()
  })

  it("answers 404 for another agent's webhook on every operation", async () => {
    const w = await env.service.create('agt_a', { url: 'http://127.0.0.1:9/h' })
    const { message_id } = await env.service.sendTest('agt_a', w.id)
    const calls: (() => unknown)[] = [
      () => env.service.get('agt_b', w.id),
      () => env.service.update('agt_b', w.id, { description: 'x' }),
      () => env.service.remove('agt_b', w.id),
      () => env.service.rotateSecret('agt_b', w.id),
      () => env.service.sendTest('agt_b', w.id),
      () => env.service.attempts('agt_b', w.id, { limit: 10 }),
      () => env.service.retry('agt_b', w.id, message_id),
    ]
    for (const c of calls) expect(await statusOf(c)).toBe(404)
    expect((await env.service.list('agt_b', { limit: 50 })).items).toEqual([])
    expect((await env.service.get('agt_a', w.id)).description).toBeNull()
    expect(await statusOf(() => env.service.retry('agt_a', w.id, 'msg_unknown'))).toBe(404)
  })

  it('patches fields, refuses a private URL when not allowed, deletes', async () => {
    const w = await env.service.create('agt_a', { url: 'http://127.0.0.1:9/h' })
    const p = await env.service.update('agt_a', w.id, { description: 'ops', event_types: ['session.stalled'] })
    expect(p).toMatchObject({ description: 'ops', event_types: ['session.stalled'] })
    const strict = await setup({ allowPrivateUrls: false }, env.handle)
    const s = await strict.service.create('agt_a', { url: 'https://8.8.8.8/h' })
    expect(await statusOf(() => strict.service.update('agt_a', s.id, { url: 'http://localhost/h' }))).toBe(422)
    await strict.close()
    await env.service.remove('agt_a', w.id)
    expect(await statusOf(() => env.service.get('agt_a', w.id))).toBe(404)
  })

  it('cascades an agent delete to its webhooks, messages and deliveries', async () => {
    const w = await env.service.create('agt_a', { url: 'http://127.0.0.1:9/h' })
    await env.service.sendTest('agt_a', w.id)
    await env.db.run("DELETE FROM agents WHERE id = 'agt_a'")
    for (const t of ['webhooks', 'webhook_messages', 'webhook_deliveries']) {
      expect(await env.count(t)).toBe(0)
    }
  })
})
