import { describe, expect, it } from 'vitest'
import { reminderFixture, statusOf } from './fixtures.js'

const at = (iso: string) => ({ type: 'scheduled' as const, at: iso })

describe('reminder lifecycle', () => {
  it('complete and dismiss are final: a second transition is 409', async () => {
    const f = await reminderFixture()
    const a = await f.reminders.create('agt_a', { title: 'a', trigger: at('2026-11-22T10:00:00Z') })
    const done = await f.reminders.complete('agt_a', a.id)
    expect(done).toMatchObject({ status: 'completed', completed_at: '2026-11-22T09:00:00.000Z', next_fire_at: null })
    for (const call of [
      () => f.reminders.complete('agt_a', a.id),
      () => f.reminders.dismiss('agt_a', a.id),
      () => f.reminders.snooze('agt_a', a.id, { minutes: 30 }),
      () => f.reminders.trigger('agt_a', a.id),
    ])
      expect(await statusOf(call)).toBe(409)
    const b = await f.reminders.create('agt_a', { title: 'b', trigger: at('2026-11-22T10:00:00Z') })
    expect((await f.reminders.dismiss('agt_a', b.id)).status).toBe('dismissed')
    expect(await statusOf(() => f.reminders.complete('agt_a', b.id))).toBe(409)
  })

  it('snooze clamps per priority and says so', async () => {
    const f = await reminderFixture()
    // Already due, so the snooze end alone decides when they fire (a snooze never brings one forward).
    const mk = async (priority: 'urgent' | 'normal' | 'low') => (await f.reminders.create('agt_a', { title: priority, priority, trigger: at('2026-11-22T08:00:00Z') })).id
    const cases: [string, number, number, boolean][] = [
      [await mk('urgent'), 1, 5, true],
      [await mk('urgent'), 30, 30, false],
      [await mk('urgent'), 600, 60, true],
      [await mk('normal'), 5, 15, true],
      [await mk('normal'), 1440, 1440, false],
      [await mk('normal'), 2000, 1440, true],
      [await mk('low'), 30, 60, true],
      [await mk('low'), 20000, 10080, true],
    ]
    for (const [id, minutes, expected, clamped] of cases) {
      const r = await f.reminders.snooze('agt_a', id, { minutes })
      expect(r.status).toBe('snoozed')
      expect(Date.parse(r.snooze_until ?? '') - f.time.now).toBe(expected * 60_000)
      expect(r.next_fire_at).toBe(r.snooze_until)
      expect(r.clamped === true).toBe(clamped)
    }
  })

  it('snooze until an instant, clamped when too far', async () => {
    const f = await reminderFixture()
    const id = (await f.reminders.create('agt_a', { title: 'x', trigger: at('2026-11-22T10:00:00Z') })).id
    const r = await f.reminders.snooze('agt_a', id, { until: '2026-11-22T11:00:00Z' })
    expect(r.snooze_until).toBe('2026-11-22T11:00:00.000Z')
    expect(r.clamped).toBeUndefined()
    const far = await f.reminders.snooze('agt_a', id, { until: '2026-12-22T11:00:00Z' })
    expect(far).toMatchObject({ snooze_until: '2026-11-23T09:00:00.000Z', clamped: true })
    expect(await statusOf(() => f.reminders.snooze('agt_a', id, {}))).toBe(400)
    expect(await statusOf(() => f.reminders.snooze('agt_a', id, { until: 'soon' }))).toBe(400)
  })

  it('due(as_of) returns pending one-shots and expired snoozes, in id order', async () => {
    const f = await reminderFixture()
    const late = await f.reminders.create('agt_a', { title: 'late', trigger: at('2026-11-22T08:30:00Z') })
    const soon = await f.reminders.create('agt_a', { title: 'soon', trigger: at('2026-11-22T09:30:00Z') })
    await f.reminders.create('agt_a', { title: 'later', trigger: at('2026-11-22T12:00:00Z') })
    await f.reminders.create('agt_a', { title: 'ctx', trigger: { type: 'context', pattern: 'x' } })
    const snoozed = await f.reminders.create('agt_a', { title: 'snz', trigger: at('2026-11-22T08:00:00Z') })
    await f.reminders.snooze('agt_a', snoozed.id, { minutes: 20 })
    expect((await f.reminders.due('agt_a', Date.parse('2026-11-22T09:00:00Z'))).items.map((r) => r.title)).toEqual(['late'])
    // The fixed clock gives all three the same creation instant, so the random id tail orders them.
    const byId = [late, soon, snoozed].sort((x, y) => (x.id < y.id ? -1 : 1)).map((r) => r.title)
    expect((await f.reminders.due('agt_a', Date.parse('2026-11-22T09:45:00Z'))).items.map((r) => r.title)).toEqual(byId)
    await f.reminders.trigger('agt_a', late.id)
    await f.reminders.complete('agt_a', soon.id)
    expect((await f.reminders.due('agt_a', Date.parse('2026-11-22T09:45:00Z'))).items.map((r) => r.title)).toEqual(['snz'])
  })

  it('trigger now: one-shots become triggered, recurring ones stay pending and scheduled', async () => {
    const f = await reminderFixture()
    const messages = () => f.db.all<{ payload: string }>("SELECT payload FROM webhook_messages WHERE event_type = 'reminder.triggered' ORDER BY id")
    const shot = await f.reminders.create('agt_a', { title: 's', trigger: at('2026-11-22T12:00:00Z') })
    expect(await f.reminders.trigger('agt_a', shot.id)).toMatchObject({ status: 'triggered', next_fire_at: null })
    const cron = await f.reminders.create('agt_a', { title: 'c', trigger: { type: 'recurring', cron: '0 * * * *' } })
    const fired = await f.reminders.trigger('agt_a', cron.id)
    expect(fired).toMatchObject({
      status: 'pending',
      triggered_at: '2026-11-22T09:00:00.000Z',
      last_fired_at: '2026-11-22T09:00:00.000Z',
      next_fire_at: '2026-11-22T10:00:00.000Z',
    })
    expect((await messages()).map((m) => JSON.parse(m.payload).data.reminder.id)).toEqual([shot.id, cron.id])
    // The schedule keeps going: due again at the next hour.
    expect((await f.reminders.due('agt_a', Date.parse('2026-11-22T10:00:00Z'))).items.map((r) => r.id)).toEqual([cron.id])
  })
})
