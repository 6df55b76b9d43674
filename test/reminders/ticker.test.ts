import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Ticker } from '../../src/reminders/ticker.js'
import { reminderFixture } from './fixtures.js'

let f: ReturnType<typeof reminderFixture>
let ticker: Ticker
beforeEach(() => {
  f = reminderFixture('2026-11-22T09:00:00.000Z')
  ticker = new Ticker({ handle: f.handle, clock: f.clock })
})
afterEach(() => f.handle.close())

interface Fired {
  type: string
  data: { reminder: { id: string; status: string; next_fire_at: string | null }; scheduled_for: string; late: boolean }
}
function messages(): Fired[] {
  return (f.handle.sqlite.prepare("SELECT payload FROM webhook_messages WHERE event_type = 'reminder.triggered' ORDER BY rowid").all() as { payload: string }[]).map(
    (r) => JSON.parse(r.payload) as Fired,
  )
}
const at = (iso: string) => Date.parse(iso)
const tickAt = (iso: string) => ticker.tick(at(iso))

describe('ticker', () => {
  it('fires a scheduled reminder once at its time and marks it triggered', () => {
    const r = f.reminders.create('agt_a', { title: 'stand up', trigger: { type: 'scheduled', at: '2026-11-22T09:30:00Z' } })
    expect(tickAt('2026-11-22T09:29:59Z').fired).toBe(0)
    expect(tickAt('2026-11-22T09:30:00.400Z').fired).toBe(1)
    expect(tickAt('2026-11-22T09:30:01Z').fired).toBe(0)
    const m = messages()
    expect(m).toHaveLength(1)
    expect(m[0]!.data).toMatchObject({ scheduled_for: '2026-11-22T09:30:00.000Z', late: false, reminder: { id: r.id, status: 'triggered', next_fire_at: null } })
    expect(f.reminders.get('agt_a', r.id)).toMatchObject({ status: 'triggered', last_fired_at: '2026-11-22T09:30:00.400Z' })
  })

  it('keeps a recurring reminder pending and advances it occurrence by occurrence', () => {
    const r = f.reminders.create('agt_a', { title: 'hourly', trigger: { type: 'recurring', cron: '0 * * * *' } })
    tickAt('2026-11-22T10:00:00Z')
    tickAt('2026-11-22T11:00:00.500Z')
    expect(messages().map((m) => m.data.scheduled_for)).toEqual(['2026-11-22T10:00:00.000Z', '2026-11-22T11:00:00.000Z'])
    expect(f.reminders.get('agt_a', r.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-22T12:00:00.000Z' })
  })

  it('applies missed_policy after downtime: once, skip, all', () => {
    const mk = (p: 'once' | 'skip' | 'all') =>
      f.reminders.create('agt_a', { title: p, missed_policy: p, trigger: { type: 'recurring', cron: '0 * * * *' } }).id
    const ids = { once: mk('once'), skip: mk('skip'), all: mk('all') }
    // Down from 09:00 to 15:30: occurrences 10:00 … 15:00 were missed.
    tickAt('2026-11-22T15:30:00Z')
    const by = (id: string) => messages().filter((m) => m.data.reminder.id === id).map((m) => [m.data.scheduled_for.slice(11, 16), m.data.late])
    expect(by(ids.once)).toEqual([['15:00', true]])
    expect(by(ids.skip)).toEqual([])
    expect(by(ids.all)).toEqual(['10:00', '11:00', '12:00', '13:00', '14:00', '15:00'].map((t) => [t, true]))
    for (const id of Object.values(ids)) expect(f.reminders.get('agt_a', id).next_fire_at).toBe('2026-11-22T16:00:00.000Z')
    tickAt('2026-11-22T15:30:00Z')
    expect(messages()).toHaveLength(7)
    tickAt('2026-11-22T16:00:00Z')
    expect(by(ids.skip)).toEqual([['16:00', false]])
  })

  it('skips a one-shot missed long ago under skip, and fires it late under once', () => {
    const skip = f.reminders.create('agt_a', { title: 's', missed_policy: 'skip', trigger: { type: 'scheduled', at: '2026-11-22T09:10:00Z' } })
    const once = f.reminders.create('agt_a', { title: 'o', trigger: { type: 'scheduled', at: '2026-11-22T09:10:00Z' } })
    tickAt('2026-11-22T12:00:00Z')
    expect(messages().map((m) => [m.data.reminder.id, m.data.late])).toEqual([[once.id, true]])
    expect(f.reminders.get('agt_a', skip.id)).toMatchObject({ status: 'pending', next_fire_at: null })
  })

  it('never fires the same occurrence twice, even when re-planned onto it', () => {
    const r = f.reminders.create('agt_a', { title: 'h', trigger: { type: 'recurring', cron: '0 * * * *' } })
    tickAt('2026-11-22T10:00:00Z')
    f.handle.sqlite.prepare('UPDATE reminders SET next_fire_at = ? WHERE id = ?').run(at('2026-11-22T10:00:00Z'), r.id)
    tickAt('2026-11-22T10:00:30Z')
    expect(messages()).toHaveLength(1)
    expect(f.handle.sqlite.prepare('SELECT count(*) AS n FROM reminder_fires').get()).toEqual({ n: 1 })
  })

  it('fires a snoozed reminder at snooze_until', () => {
    const r = f.reminders.create('agt_a', { title: 'z', trigger: { type: 'scheduled', at: '2026-11-22T09:05:00Z' } })
    f.reminders.snooze('agt_a', r.id, { until: '2026-11-22T11:00:00Z' })
    expect(tickAt('2026-11-22T09:05:00Z').fired).toBe(0)
    tickAt('2026-11-22T11:00:00Z')
    expect(messages().map((m) => [m.data.scheduled_for, m.data.late, m.data.reminder.status])).toEqual([
      ['2026-11-22T11:00:00.000Z', false, 'triggered'],
    ])
  })

  it('follows DST in America/New_York: spring-forward gap fires at 03:00, fall-back overlap fires once', () => {
    f.setNow('2026-03-07T12:00:00Z')
    const spring = f.reminders.create('agt_a', {
      title: 'gap',
      trigger: { type: 'recurring', cron: '30 2 * * *', timezone: 'America/New_York' },
    })
    expect(f.reminders.get('agt_a', spring.id).next_fire_at).toBe('2026-03-08T07:00:00.000Z') // 03:00 EDT
    tickAt('2026-03-08T07:00:00Z')
    expect(f.reminders.get('agt_a', spring.id).next_fire_at).toBe('2026-03-09T06:30:00.000Z') // 02:30 EDT
    f.setNow('2026-10-31T12:00:00Z')
    const fall = f.reminders.create('agt_a', {
      title: 'overlap',
      trigger: { type: 'recurring', cron: '30 1 * * *', timezone: 'America/New_York' },
    })
    expect(f.reminders.get('agt_a', fall.id).next_fire_at).toBe('2026-11-01T05:30:00.000Z') // 01:30 EDT
    tickAt('2026-11-01T05:30:00Z')
    tickAt('2026-11-01T06:30:00Z') // 01:30 EST, the repeated hour: nothing due
    const fallFires = messages().filter((m) => m.data.reminder.id === fall.id)
    expect(fallFires.map((m) => m.data.scheduled_for)).toEqual(['2026-11-01T05:30:00.000Z'])
    expect(f.reminders.get('agt_a', fall.id).next_fire_at).toBe('2026-11-02T06:30:00.000Z') // 01:30 EST
  })

  it('holds non-urgent fires during quiet hours until they end, keeping scheduled_for', () => {
    f.settings.put('agt_a', { timezone: 'America/New_York', quiet_hours: { start: '22:00', end: '07:00' } })
    // 23:00 New York = 04:00Z next day.
    const normal = f.reminders.create('agt_a', { title: 'n', trigger: { type: 'scheduled', at: '2026-11-23T04:00:00Z' } })
    const urgent = f.reminders.create('agt_a', { title: 'u', priority: 'urgent', trigger: { type: 'scheduled', at: '2026-11-23T04:00:00Z' } })
    const exempt = f.reminders.create('agt_a', { title: 'e', quiet_hours_exempt: true, trigger: { type: 'scheduled', at: '2026-11-23T04:00:00Z' } })
    const res = tickAt('2026-11-23T04:00:00Z')
    expect(res).toMatchObject({ fired: 2, held: 1 })
    expect(messages().map((m) => m.data.reminder.id).sort()).toEqual([urgent.id, exempt.id].sort())
    expect(f.reminders.get('agt_a', normal.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-23T12:00:00.000Z' })
    expect(tickAt('2026-11-23T11:59:59Z').fired).toBe(0)
    tickAt('2026-11-23T12:00:00Z')
    const held = messages().find((m) => m.data.reminder.id === normal.id)!
    expect(held.data).toMatchObject({ scheduled_for: '2026-11-23T04:00:00.000Z', late: true, reminder: { status: 'triggered' } })
  })

  it('fires 2,000 due reminders in batches, each exactly once', () => {
    const ins = f.handle.sqlite.prepare(`INSERT INTO reminders (id, doc_id, agent_id, title, body, trigger_type, trigger_at, status,
      priority, context_tags, quiet_hours_exempt, missed_policy, created_at, updated_at, next_fire_at)
      VALUES (?, ?, 'agt_a', 't', '', 'scheduled', ?, 'pending', 'normal', '[]', 0, 'once', 0, 0, ?)`)
    const due = at('2026-11-22T10:00:00Z')
    f.handle.sqlite.transaction(() => {
      for (let i = 0; i < 2_000; i++) ins.run(`rem_${String(i).padStart(6, '0')}`, i + 1, due, due)
    })()
    let fired = 0
    for (let i = 0; i < 10 && fired < 2_000; i++) fired += tickAt('2026-11-22T10:00:00Z').fired
    expect(fired).toBe(2_000)
    expect(f.handle.sqlite.prepare('SELECT count(*) AS n FROM reminder_fires').get()).toEqual({ n: 2_000 })
  })
})
