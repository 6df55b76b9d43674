import { beforeEach, describe, expect, it } from 'vitest'
import { Ticker } from '../../src/reminders/ticker.js'
import type { Reminder } from '../../src/reminders/model.js'
import { TurnsService } from '../../src/reminders/turns.js'
import { reminderFixture, type ReminderFixture, reminderParts } from './fixtures.js'

/** Every firing path (ticker, trigger now, turn start) must leave a reminder in the same state. */
let f: ReminderFixture
let ticker: Ticker
let turns: TurnsService
beforeEach(async () => {
  f = await reminderFixture('2026-11-22T09:00:00.000Z')
  ticker = new Ticker({ ...reminderParts(f.db, f.clock), clock: f.clock })
  turns = new TurnsService({ reminders: f.reminders, repo: f.repo, settings: f.settings, search: f.search, clock: f.clock })
})

async function messages(): Promise<{ reminder: Reminder; scheduled_for: string; late: boolean }[]> {
  const rows = await f.db.all<{ payload: string }>("SELECT payload FROM webhook_messages WHERE event_type = 'reminder.triggered' ORDER BY id")
  return rows.map((r) => (JSON.parse(r.payload) as { data: { reminder: Reminder; scheduled_for: string; late: boolean } }).data)
}
// late as 0/1 on both dialects.
const fires = () => f.db.all(`SELECT scheduled_for, CASE WHEN late THEN 1 ELSE 0 END AS late FROM reminder_fires ORDER BY scheduled_for`)
const hourly = (title: string) => f.reminders.create('agt_a', { title, trigger: { type: 'recurring', cron: '0 * * * *' } })
/** The state a fire leaves, without what names the reminder. */
const state = (r: Reminder) => ({ status: r.status, next_fire_at: r.next_fire_at, triggered_at: r.triggered_at, last_fired_at: r.last_fired_at, snooze_until: r.snooze_until })

describe('one firing rule for the ticker, trigger now and turn start', () => {
  it('a due recurring reminder stays pending and advances the same way on every path', async () => {
    const viaTicker = await hourly('ticker')
    const viaTrigger = await hourly('trigger')
    const viaTurn = await f.reminders.create('agt_b', { title: 'turn', trigger: { type: 'recurring', cron: '0 * * * *' } })
    f.setNow('2026-11-22T10:00:00.500Z')
    const triggered = await f.reminders.trigger('agt_a', viaTrigger.id)
    const turned = await turns.start('agt_b', { user_message: 'hello' })
    expect(turned.reminders.map((r) => r.id)).toEqual([viaTurn.id])
    // The two already fired are no longer due; the ticker fires only its own.
    expect((await ticker.tick(f.clock())).fired).toBe(1)
    const expected = {
      status: 'pending',
      next_fire_at: '2026-11-22T11:00:00.000Z',
      triggered_at: '2026-11-22T10:00:00.500Z',
      last_fired_at: '2026-11-22T10:00:00.500Z',
      snooze_until: null,
    }
    expect(state(triggered)).toEqual(expected)
    expect(state(turned.reminders[0]!)).toEqual(expected)
    for (const r of [viaTicker, viaTrigger]) expect(state(await f.reminders.get('agt_a', r.id))).toEqual(expected)
    expect(state(await f.reminders.get('agt_b', viaTurn.id))).toEqual(expected)
    expect((await messages()).map((m) => m.reminder.id)).toEqual([viaTrigger.id, viaTicker.id])
  })

  it('trigger now before the due time keeps next_fire_at, and the scheduled occurrence still fires', async () => {
    const r = await hourly('h')
    f.setNow('2026-11-22T09:20:00Z')
    const fired = await f.reminders.trigger('agt_a', r.id)
    expect(state(fired)).toEqual({
      status: 'pending',
      next_fire_at: '2026-11-22T10:00:00.000Z',
      triggered_at: '2026-11-22T09:20:00.000Z',
      last_fired_at: '2026-11-22T09:20:00.000Z',
      snooze_until: null,
    })
    expect((await ticker.tick(Date.parse('2026-11-22T10:00:00.200Z'))).fired).toBe(1)
    expect((await messages()).map((m) => [m.scheduled_for, m.late])).toEqual([
      ['2026-11-22T09:20:00.000Z', false],
      ['2026-11-22T10:00:00.000Z', false],
    ])
    expect(await fires()).toHaveLength(2)
    expect(await f.reminders.get('agt_a', r.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-22T11:00:00.000Z' })
  })

  it('trigger now on a due occurrence stands for it: the ticker does not fire it again', async () => {
    const r = await hourly('h')
    f.setNow('2026-11-22T10:00:00Z')
    await f.reminders.trigger('agt_a', r.id)
    expect((await ticker.tick(Date.parse('2026-11-22T10:00:00.300Z'))).fired).toBe(0)
    expect((await messages()).map((m) => m.scheduled_for)).toEqual(['2026-11-22T10:00:00.000Z'])
    expect((await f.reminders.get('agt_a', r.id)).next_fire_at).toBe('2026-11-22T11:00:00.000Z')
  })

  it('trigger now writes the reminder.triggered message with the fired reminder; a snoozed one-shot becomes triggered', async () => {
    const r = await f.reminders.create('agt_a', { title: 'pay', trigger: { type: 'scheduled', at: '2026-11-22T12:00:00Z' } })
    await f.reminders.snooze('agt_a', r.id, { minutes: 30 })
    f.setNow('2026-11-22T09:05:00Z')
    const fired = await f.reminders.trigger('agt_a', r.id)
    expect(fired).toMatchObject({ status: 'triggered', next_fire_at: null, snooze_until: null, last_fired_at: '2026-11-22T09:05:00.000Z' })
    expect(await messages()).toEqual([{ reminder: fired, scheduled_for: '2026-11-22T09:05:00.000Z', late: false }])
    // Nothing left for the scheduler.
    expect((await ticker.tick(Date.parse('2026-11-22T13:00:00Z'))).fired).toBe(0)
    expect(await messages()).toHaveLength(1)
  })

  it('trigger now during quiet hours answers the held occurrence; the schedule resumes from the next real one', async () => {
    await f.settings.put('agt_a', { quiet_hours: { start: '22:00', end: '07:00' } })
    f.setNow('2026-11-22T21:30:00Z')
    const r = await hourly('h')
    await ticker.tick(Date.parse('2026-11-22T22:00:00Z'))
    expect((await f.reminders.get('agt_a', r.id)).next_fire_at).toBe('2026-11-23T07:00:00.000Z')
    f.setNow('2026-11-22T22:30:00Z')
    expect(await f.reminders.trigger('agt_a', r.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-22T23:00:00.000Z' })
    await ticker.tick(Date.parse('2026-11-22T23:00:00Z'))
    await ticker.tick(Date.parse('2026-11-23T07:00:00Z'))
    // The manual fire, then the 23:00 occurrence held to 07:00; the 22:00 one is not sent again.
    expect((await messages()).map((m) => [m.scheduled_for, m.late])).toEqual([
      ['2026-11-22T22:30:00.000Z', false],
      ['2026-11-22T23:00:00.000Z', true],
    ])
  })

  it('turn start delivers without writing webhook messages or fire records', async () => {
    await f.reminders.create('agt_a', { title: 'due', trigger: { type: 'scheduled', at: '2026-11-22T08:00:00Z' } })
    await f.reminders.create('agt_a', { title: 'deploy check', trigger: { type: 'context', pattern: 'deploy' } })
    const hour = await hourly('h')
    f.setNow('2026-11-22T10:00:00Z')
    expect((await turns.start('agt_a', { user_message: 'deploy now' })).reminders).toHaveLength(3)
    expect(await messages()).toEqual([])
    expect(await fires()).toEqual([])
    expect((await f.reminders.get('agt_a', hour.id)).status).toBe('pending')
  })

  it('a trigger refused with 409 writes no message', async () => {
    const r = await f.reminders.create('agt_a', { title: 'x', trigger: { type: 'context', pattern: 'x' } })
    await f.reminders.complete('agt_a', r.id)
    await expect(f.reminders.trigger('agt_a', r.id)).rejects.toThrow()
    expect(await messages()).toEqual([])
  })
})
