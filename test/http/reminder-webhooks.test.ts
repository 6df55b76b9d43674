import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { DEFAULT_DELIVERY_SETTINGS } from '../../src/webhooks/retry-policy.js'
import { buildTestApp } from '../helpers.js'
import { Receiver } from '../webhooks/receiver.js'
import { verify } from '../webhooks/verify.js'

const NOW = Date.parse('2026-11-22T09:00:00.000Z')
let rx: Receiver
beforeEach(async () => {
  rx = await new Receiver().start()
})
afterEach(async () => rx.stop())

async function setup() {
  const t = await buildTestApp({ clock: () => NOW, env: { GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } })
  const a = await t.createAgent()
  const hook = (await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: a.headers, payload: { url: rx.url, event_types: ['reminder.triggered'] } })).json()
  const create = async (payload: object) => (await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: a.headers, payload })).json()
  /** Delivers whatever the outbox holds to the receiver, as the ticker's pump would. */
  const deliver = async () => {
    const dispatcher = new Dispatcher({ db: t.db, settings: { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: true }, clock: () => NOW })
    await dispatcher.runDue()
    await dispatcher.stop()
  }
  return { t, a, hook, create, deliver }
}

describe('reminder fires over REST and webhooks', () => {
  it('trigger now sends a signed reminder.triggered with scheduled_for = now, late false', async () => {
    const { t, a, hook, create, deliver } = await setup()
    const r = await create({ title: 'Pay invoice', trigger: { type: 'scheduled', at: '2026-11-23T09:00:00Z' } })
    const fired = await t.app.inject({ method: 'POST', url: `/v1/reminders/${r.id}/trigger`, headers: a.headers })
    expect(fired.statusCode).toBe(200)
    await deliver()
    expect(rx.received).toHaveLength(1)
    expect(verify(hook.secret, rx.received[0]!)).toEqual({
      type: 'reminder.triggered',
      timestamp: '2026-11-22T09:00:00.000Z',
      data: { reminder: fired.json(), scheduled_for: '2026-11-22T09:00:00.000Z', late: false },
    })
    const log = (await t.app.inject({ url: `/v1/webhooks/${hook.id}/deliveries`, headers: a.headers })).json()
    expect(log.items).toEqual([expect.objectContaining({ event_type: 'reminder.triggered', attempt: 1, status_code: 204 })])
  })

  it('a recurring reminder triggered by hand stays pending on its schedule and is announced', async () => {
    const { t, a, hook, create, deliver } = await setup()
    const r = await create({ title: 'Standup', trigger: { type: 'recurring', cron: '30 9 * * *' } })
    const fired = (await t.app.inject({ method: 'POST', url: `/v1/reminders/${r.id}/trigger`, headers: a.headers })).json()
    expect(fired).toMatchObject({ status: 'pending', next_fire_at: '2026-11-22T09:30:00.000Z', last_fired_at: '2026-11-22T09:00:00.000Z' })
    await deliver()
    expect(rx.received).toHaveLength(1)
    expect(verify(hook.secret, rx.received[0]!)).toMatchObject({ data: { reminder: { id: r.id, status: 'pending' } } })
  })

  it('turn start deliveries do not notify webhooks: the agent has them in the response', async () => {
    const { t, a, create, deliver } = await setup()
    const r = await create({ title: 'Rotate keys', trigger: { type: 'scheduled', at: '2026-11-22T08:00:00Z' } })
    const turn = (await t.app.inject({ method: 'POST', url: '/v1/turns', headers: a.headers, payload: { user_message: 'hi' } })).json()
    expect(turn.reminders.map((x: { id: string }) => x.id)).toEqual([r.id])
    await deliver()
    expect(rx.received).toHaveLength(0)
    // Delivered once: the scheduler has nothing left to fire for it either.
    expect((await t.app.inject({ url: '/v1/reminders/due?as_of=2026-11-22T10:00:00Z', headers: a.headers })).json().items).toEqual([])
  })
})
