import { describe, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'

const NOW = Date.parse('2026-11-22T10:00:00.000Z')

async function setup(): Promise<TestApp & { a: TestAgent }> {
  const t = await buildTestApp({ clock: () => NOW })
  // Not a spread: TestApp's `sqlite` getter throws on PostgreSQL.
  return Object.assign(t, { a: await t.createAgent('a') })
}

type Json = Record<string, unknown>

function api(t: TestApp & { a: TestAgent }) {
  const h = t.a.headers
  return {
    create: async (payload: object) => (await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload })).json() as Json,
    snooze: async (id: unknown, payload: object) => (await t.app.inject({ method: 'POST', url: `/v1/reminders/${id}/snooze`, headers: h, payload })).json() as Json,
    get: async (id: unknown) => (await t.app.inject({ url: `/v1/reminders/${id}`, headers: h })).json() as Json,
    dueIds: async (asOf: string) => ((await t.app.inject({ url: `/v1/reminders/due?as_of=${asOf}`, headers: h })).json() as { items: Json[] }).items.map((r) => r.id),
    /** Turn start at `now`: the reminders it delivers. */
    turnIds: async (now: string) =>
      ((await t.app.inject({ method: 'POST', url: '/v1/turns', headers: h, payload: { user_message: 'status?', now } })).json() as { reminders: Json[] }).reminders.map((r) => r.id),
  }
}

describe('POST /v1/reminders/{id}/snooze never brings an undelivered reminder forward', () => {
  // snooze_until is always the end asked for (after clamping); next_fire_at is when it will fire.
  it('a one-shot due tomorrow snoozed 30 minutes still fires tomorrow, not in 30 minutes', async () => {
    const t = await setup()
    const a = api(t)
    const r = await a.create({ title: 'Send the report', trigger: { type: 'scheduled', at: '2026-11-23T09:00:00Z' } })
    const snoozed = await a.snooze(r.id, { minutes: 30 })
    expect(snoozed).toMatchObject({ status: 'snoozed', snooze_until: '2026-11-22T10:30:00.000Z', next_fire_at: '2026-11-23T09:00:00.000Z' })
    expect(snoozed.clamped).toBeUndefined()
    expect(await a.dueIds('2026-11-22T10:31:00Z')).toEqual([])
    expect(await a.turnIds('2026-11-22T10:31:00Z')).toEqual([])
    expect(await a.dueIds('2026-11-23T09:00:00Z')).toEqual([r.id])
  })

  it('an urgent recurring reminder snoozed keeps its next occurrence (tomorrow), and fires it once', async () => {
    const t = await setup()
    const a = api(t)
    const r = await a.create({ title: 'Standup', priority: 'urgent', trigger: { type: 'recurring', cron: '0 9 * * *', timezone: 'UTC' } })
    expect(r.next_fire_at).toBe('2026-11-23T09:00:00.000Z')
    const snoozed = await a.snooze(r.id, { minutes: 30 })
    expect(snoozed).toMatchObject({ status: 'snoozed', next_fire_at: '2026-11-23T09:00:00.000Z', snooze_until: '2026-11-22T10:30:00.000Z' })
    expect(await a.turnIds('2026-11-22T10:30:00Z')).toEqual([])
    expect(await a.turnIds('2026-11-23T09:00:10Z')).toEqual([r.id])
    // That occurrence is answered: the next one is the day after, not a second fire of the same one.
    expect(await a.get(r.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-24T09:00:00.000Z', snooze_until: null })
  })

  it('`until` before the next fire time keeps the next fire time; after it, the snooze wins', async () => {
    const t = await setup()
    const a = api(t)
    const r = await a.create({ title: 'x', trigger: { type: 'scheduled', at: '2026-11-22T12:00:00Z' } })
    expect(await a.snooze(r.id, { until: '2026-11-22T11:00:00Z' })).toMatchObject({ snooze_until: '2026-11-22T11:00:00.000Z', next_fire_at: '2026-11-22T12:00:00.000Z' })
    expect(await a.snooze(r.id, { until: '2026-11-22T13:00:00Z' })).toMatchObject({ snooze_until: '2026-11-22T13:00:00.000Z', next_fire_at: '2026-11-22T13:00:00.000Z' })
    // A second, shorter snooze shortens the first, but not to before the reminder's own time.
    expect(await a.snooze(r.id, { minutes: 15 })).toMatchObject({ snooze_until: '2026-11-22T10:15:00.000Z', next_fire_at: '2026-11-22T12:00:00.000Z' })
    expect(await a.dueIds('2026-11-22T11:59:59Z')).toEqual([])
    expect(await a.dueIds('2026-11-22T12:00:00Z')).toEqual([r.id])
  })

  it('a recurring reminder just delivered, snoozed 30 minutes, fires again in 30 minutes, then keeps its schedule', async () => {
    const t = await setup()
    const a = api(t)
    const r = await a.create({ title: 'Standup', trigger: { type: 'recurring', cron: '0 9 * * *', timezone: 'UTC' } })
    const fired = (await t.app.inject({ method: 'POST', url: `/v1/reminders/${r.id}/trigger`, headers: t.a.headers })).json() as Json
    expect(fired).toMatchObject({ status: 'pending', last_fired_at: '2026-11-22T10:00:00.000Z', next_fire_at: '2026-11-23T09:00:00.000Z' })
    // "Remind me again in 30 minutes", not "skip to tomorrow's standup".
    expect(await a.snooze(r.id, { minutes: 30 })).toMatchObject({ status: 'snoozed', snooze_until: '2026-11-22T10:30:00.000Z' })
    expect(await a.turnIds('2026-11-22T10:30:10Z')).toEqual([r.id])
    expect(await a.get(r.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-23T09:00:00.000Z', snooze_until: null })
  })

  it('a reminder already due is postponed by the snooze, clamped as before', async () => {
    const t = await setup()
    const a = api(t)
    const overdue = await a.create({ title: 'late', priority: 'urgent', trigger: { type: 'scheduled', at: '2026-11-22T08:00:00Z' } })
    expect(await a.dueIds('2026-11-22T10:00:00Z')).toEqual([overdue.id])
    expect(await a.snooze(overdue.id, { minutes: 600 })).toMatchObject({ snooze_until: '2026-11-22T11:00:00.000Z', clamped: true })
    const fired = await a.create({ title: 'fired', trigger: { type: 'scheduled', at: '2026-11-22T09:00:00Z' } })
    expect(await a.turnIds('2026-11-22T10:00:00Z')).toEqual([fired.id])
    // A triggered one-shot has nothing left to fire: the snooze alone decides.
    expect(await a.snooze(fired.id, { minutes: 30 })).toMatchObject({ status: 'snoozed', snooze_until: '2026-11-22T10:30:00.000Z' })
  })
})

describe('POST /v1/reminders/{id}/snooze refuses a snooze that ends now or earlier', () => {
  it('zero or negative minutes, or an `until` not after now, is a 400 naming the field, and changes nothing', async () => {
    const t = await setup()
    const r = await api(t).create({ title: 'x', trigger: { type: 'scheduled', at: '2026-11-23T09:00:00Z' } })
    const cases: [object, string][] = [
      [{ minutes: 0 }, 'body/minutes'],
      [{ minutes: -5 }, 'body/minutes'],
      [{ minutes: -0.5 }, 'body/minutes'],
      [{ until: '2026-11-22T09:59:00Z' }, 'body/until'],
      [{ until: '2026-11-22T10:00:00Z' }, 'body/until'],
      [{ until: '2026-11-22T12:00:00+03:00' }, 'body/until'],
    ]
    for (const [payload, path] of cases) {
      const res = await t.app.inject({ method: 'POST', url: `/v1/reminders/${r.id}/snooze`, headers: t.a.headers, payload })
      expect([payload, res.statusCode, res.headers['content-type']]).toEqual([payload, 400, expect.stringContaining('application/problem+json')])
      expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual([path])
    }
    expect(await api(t).get(r.id)).toMatchObject({ status: 'pending', snooze_until: null })
    // Past the maximum is still clamped, and a positive duration under the minimum rounded up.
    expect(await api(t).snooze(r.id, { minutes: 1e9 })).toMatchObject({ snooze_until: '2026-11-23T10:00:00.000Z', clamped: true })
    expect(await api(t).snooze(r.id, { minutes: 0.5 })).toMatchObject({ snooze_until: '2026-11-22T10:15:00.000Z', clamped: true })
  })
})
