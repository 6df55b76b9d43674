import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Ticker } from '../../src/reminders/ticker.js'
import type { Reminder } from '../../src/reminders/model.js'
import { TurnsService } from '../../src/reminders/turns.js'
import { reminderFixture } from './fixtures.js'

/** Every firing path (ticker, trigger now, turn start) must leave a reminder in the same state. */
let f: ReturnType<typeof reminderFixture>
let ticker: Ticker
let turns: TurnsService
beforeEach(() => {
  f = reminderFixture('2026-11-22T09:00:00.000Z')
  ticker = new Ticker({ handle: f.handle, clock: f.clock })
  turns = new TurnsService(f.reminders, f.search, f.clock)
})
afterEach(() => f.handle.close())

function messages(): { reminder: Reminder; scheduled_for: string; late: boolean }[] {
  const rows = f.handle.sqlite.prepare("SELECT payload FROM webhook_messages WHERE event_type = 'reminder.triggered' ORDER BY rowid").all() as { payload: string }[]
  return rows.map((r) => (JSON.parse(r.payload) as { data: { reminder: Reminder; scheduled_for: string; late: boolean } }).data)
}
const fires = () => f.handle.sqlite.prepare('SELECT scheduled_for, late FROM reminder_fires ORDER BY scheduled_for').all()
const hourly = (title: string) => f.reminders.create('agt_a', { title, trigger: { type: 'recurring', cron: '0 * * * *' } })
/** The state a fire leaves, without what names the reminder. */
const state = (r: Reminder) => ({ status: r.status, next_fire_at: r.next_fire_at, triggered_at: r.triggered_at, last_fired_at: r.last_fired_at, snooze_until: r.snooze_until })

describe('one firing rule for the ticker, trigger now and turn start', () => {
  it('a due recurring reminder stays pending and advances the same way on every path', () => {
    const viaTicker = hourly('ticker')
    const viaTrigger = hourly('trigger')
    const viaTurn = f.reminders.create('agt_b', { title: 'turn', trigger: { type: 'recurring', cron: '0 * * * *' } })
    f.setNow('2026-11-22T10:00:00.500Z')
    const triggered = f.reminders.trigger('agt_a', viaTrigger.id)
    const turned = turns.start('agt_b', { user_message: 'hello' })
    expect(turned.reminders.map((r) => r.id)).toEqual([viaTurn.id])
    // The two already fired are no longer due; the ticker fires only its own.
    expect(ticker.tick(f.clock()).fired).toBe(1)
    const expected = {
      status: 'pending', next_fire_at: '2026-11-22T11:00:00.000Z', triggered_at: '2026-11-22T10:00:00.500Z',
      last_fired_at: '2026-11-22T10:00:00.500Z', snooze_until: null,
    }
    expect(state(triggered)).toEqual(expected)
    expect(state(turned.reminders[0]!)).toEqual(expected)
    for (const r of [viaTicker, viaTrigger]) expect(state(f.reminders.get('agt_a', r.id))).toEqual(expected)
    expect(state(f.reminders.get('agt_b', viaTurn.id))).toEqual(expected)
    expect(messages().map((m) => m.reminder.id)).toEqual([viaTrigger.id, viaTicker.id])
  })

  it('trigger now before the due time keeps next_fire_at, and the scheduled occurrence still fires', () => {
    const r = hourly('h')
    f.setNow('2026-11-22T09:20:00Z')
    const fired = f.reminders.trigger('agt_a', r.id)
    expect(state(fired)).toEqual({
      status: 'pending', next_fire_at: '2026-11-22T10:00:00.000Z', triggered_at: '2026-11-22T09:20:00.000Z',
      last_fired_at: '2026-11-22T09:20:00.000Z', snooze_until: null,
    })
    expect(ticker.tick(Date.parse('2026-11-22T10:00:00.200Z')).fired).toBe(1)
    expect(messages().map((m) => [m.scheduled_for, m.late])).toEqual([
      ['2026-11-22T09:20:00.000Z', false],
      ['2026-11-22T10:00:00.000Z', false],
    ])
    expect(fires()).toHaveLength(2)
    expect(f.reminders.get('agt_a', r.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-22T11:00:00.000Z' })
  })

  it('trigger now on a due occurrence stands for it: the ticker does not fire it again', () => {
    const r = hourly('h')
    f.setNow('2026-11-22T10:00:00Z')
    f.reminders.trigger('agt_a', r.id)
    expect(ticker.tick(Date.parse('2026-11-22T10:00:00.300Z')).fired).toBe(0)
    expect(messages().map((m) => m.scheduled_for)).toEqual(['2026-11-22T10:00:00.000Z'])
    expect(f.reminders.get('agt_a', r.id).next_fire_at).toBe('2026-11-22T11:00:00.000Z')
  })

  it('trigger now writes the reminder.triggered message with the fired reminder; a snoozed one-shot becomes triggered', () => {
    const r = f.reminders.create('agt_a', { title: 'pay', trigger: { type: 'scheduled', at: '2026-11-22T12:00:00Z' } })
    f.reminders.snooze('agt_a', r.id, { minutes: 30 })
    f.setNow('2026-11-22T09:05:00Z')
    const fired = f.reminders.trigger('agt_a', r.id)
    expect(fired).toMatchObject({ status: 'triggered', next_fire_at: null, snooze_until: null, last_fired_at: '2026-11-22T09:05:00.000Z' })
    expect(messages()).toEqual([{ reminder: fired, scheduled_for: '2026-11-22T09:05:00.000Z', late: false }])
    // Nothing left for the scheduler.
    expect(ticker.tick(Date.parse('2026-11-22T13:00:00Z')).fired).toBe(0)
    expect(messages()).toHaveLength(1)
  })

  it('trigger now during quiet hours answers the held occurrence; the schedule resumes from the next real one', () => {
    f.settings.put('agt_a', { quiet_hours: { start: '22:00', end: '07:00' } })
    f.setNow('2026-11-22T21:30:00Z')
    const r = hourly('h')
    ticker.tick(Date.parse('2026-11-22T22:00:00Z'))
    expect(f.reminders.get('agt_a', r.id).next_fire_at).toBe('2026-11-23T07:00:00.000Z')
    f.setNow('2026-11-22T22:30:00Z')
    expect(f.reminders.trigger('agt_a', r.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-22T23:00:00.000Z' })
    ticker.tick(Date.parse('2026-11-22T23:00:00Z'))
    ticker.tick(Date.parse('2026-11-23T07:00:00Z'))
    // The manual fire, then the 23:00 occurrence held to 07:00; the 22:00 one is not sent again.
    expect(messages().map((m) => [m.scheduled_for, m.late])).toEqual([
      ['2026-11-22T22:30:00.000Z', false],
      ['2026-11-22T23:00:00.000Z', true],
    ])
  })

  it('turn start delivers without writing webhook messages or fire records', () => {
    f.reminders.create('agt_a', { title: 'due', trigger: { type: 'scheduled', at: '2026-11-22T08:00:00Z' } })
    f.reminders.create('agt_a', { title: 'deploy check', trigger: { type: 'context', pattern: 'deploy' } })
    const hour = hourly('h')
    f.setNow('2026-11-22T10:00:00Z')
    expect(turns.start('agt_a', { user_message: 'deploy now' }).reminders).toHaveLength(3)
    expect(messages()).toEqual([])
    expect(fires()).toEqual([])
    expect(f.reminders.get('agt_a', hour.id).status).toBe('pending')
  })

  it('a trigger refused with 409 writes no message', () => {
    const r = f.reminders.create('agt_a', { title: 'x', trigger: { type: 'context', pattern: 'x' } })
    f.reminders.complete('agt_a', r.id)
    expect(() => f.reminders.trigger('agt_a', r.id)).toThrow()
    expect(messages()).toEqual([])
  })
})
