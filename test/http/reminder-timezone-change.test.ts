import { describe, expect, it } from 'vitest'
import { Ticker } from '../../src/reminders/ticker.js'
import { buildTestApp, subscribeToEvents } from '../helpers.js'
import { reminderParts } from '../reminders/fixtures.js'

/** A settings change re-plans recurring reminders; a quiet-hours hold from the old plan must not outlive it. */
describe('PUT /v1/settings with a new timezone re-plans recurring reminders', () => {
  async function setup() {
    const time = { now: Date.parse('2026-03-02T12:00:00Z') }
    const clock = () => time.now
    const t = await buildTestApp({ clock })
    const a = await t.createAgent('a')
    await subscribeToEvents(t.db, a.id)
    const ticker = new Ticker({ ...reminderParts(t.db, clock), clock })
    const tickAt = (iso: string) => {
      time.now = Date.parse(iso)
      return ticker.tick(time.now)
    }
    const inject = async (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) => {
      const res = await t.app.inject({ method, url, headers: a.headers, ...(payload ? { payload } : {}) })
      expect(res.statusCode, `${method} ${url} → ${res.body}`).toBe(method === 'POST' ? 201 : 200)
      return res.json<Record<string, unknown>>()
    }
    const announced = async () =>
      (await t.db.all<{ payload: string }>("SELECT payload FROM webhook_messages WHERE event_type = 'reminder.triggered' ORDER BY id"))
        .map((r) => JSON.parse(r.payload) as { data: { reminder: { id: string }; scheduled_for: string; late: boolean } })
        .map((m) => [m.data.scheduled_for, m.data.late])
    return { time, tickAt, inject, announced }
  }

  it('a hold taken under the old timezone does not apply to the new schedule', async () => {
    const { time, tickAt, inject, announced } = await setup()
    await inject('PUT', '/v1/settings', { timezone: 'UTC', quiet_hours: { start: '22:00', end: '07:00' } })
    const r = await inject('POST', '/v1/reminders', { title: 'wind down', trigger: { type: 'recurring', cron: '30 22 * * *' } })
    expect(r.next_fire_at).toBe('2026-03-02T22:30:00.000Z')
    // 22:30 UTC is quiet: the occurrence is held until 07:00 UTC.
    expect(await tickAt('2026-03-02T22:30:00Z')).toMatchObject({ held: 1, fired: 0 })
    expect((await inject('GET', `/v1/reminders/${r.id}`)).next_fire_at).toBe('2026-03-03T07:00:00.000Z')

    // The agent moves to Tokyo (UTC+9, no DST): 22:30 Tokyo is 13:30Z, and quiet hours are 13:00Z–22:00Z.
    time.now = Date.parse('2026-03-02T23:00:00Z')
    await inject('PUT', '/v1/settings', { timezone: 'Asia/Tokyo' })
    expect((await inject('GET', `/v1/reminders/${r.id}`)).next_fire_at).toBe('2026-03-03T13:30:00.000Z')

    // The new occurrence falls in the new quiet hours: it is held under its own time ...
    expect(await tickAt('2026-03-03T13:30:00Z')).toMatchObject({ held: 1, fired: 0 })
    expect((await inject('GET', `/v1/reminders/${r.id}`)).next_fire_at).toBe('2026-03-03T22:00:00.000Z')
    // ... and goes out when they end, announcing the occurrence of the new schedule, not the old one.
    expect(await tickAt('2026-03-03T22:00:00Z')).toMatchObject({ fired: 1 })
    expect(await announced()).toEqual([['2026-03-03T13:30:00.000Z', true]])
    expect(await inject('GET', `/v1/reminders/${r.id}`)).toMatchObject({ status: 'pending', next_fire_at: '2026-03-04T13:30:00.000Z' })
  })

  it('bumps updated_at of every re-planned reminder, and only of those', async () => {
    const { time, inject } = await setup()
    const follows = await inject('POST', '/v1/reminders', { title: 'f', trigger: { type: 'recurring', cron: '0 9 * * *' } })
    const own = await inject('POST', '/v1/reminders', { title: 'o', trigger: { type: 'recurring', cron: '0 9 * * *', timezone: 'UTC' } })
    time.now = Date.parse('2026-03-02T12:05:00Z')
    await inject('PUT', '/v1/settings', { timezone: 'America/New_York' })
    expect(await inject('GET', `/v1/reminders/${follows.id}`)).toMatchObject({ next_fire_at: '2026-03-02T14:00:00.000Z', updated_at: '2026-03-02T12:05:00.000Z' })
    expect(await inject('GET', `/v1/reminders/${own.id}`)).toMatchObject({ next_fire_at: '2026-03-03T09:00:00.000Z', updated_at: own.updated_at })
  })
})
