import { beforeEach, describe, expect, it } from 'vitest'
import { Ticker } from '../../src/reminders/ticker.js'
import type { Claim } from '../../src/reminders/repository.js'
import type { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { insertDue, reminderFixture, type ReminderFixture, reminderParts } from './fixtures.js'

let f: ReminderFixture
let ticker: Ticker
beforeEach(async () => {
  f = await reminderFixture('2026-11-22T09:00:00.000Z')
  ticker = new Ticker({ ...reminderParts(f.db, f.clock), clock: f.clock })
})

interface Fired {
  type: string
  data: { reminder: { id: string; status: string; next_fire_at: string | null }; scheduled_for: string; late: boolean }
}
async function messages(): Promise<Fired[]> {
  // Message ids sort by creation time, then by a counter within one millisecond.
  const rows = await f.db.all<{ payload: string }>("SELECT payload FROM webhook_messages WHERE event_type = 'reminder.triggered' ORDER BY id")
  return rows.map((r) => JSON.parse(r.payload) as Fired)
}
const at = (iso: string) => Date.parse(iso)
const tickAt = (iso: string) => ticker.tick(at(iso))

describe('ticker', () => {
  it('fires a scheduled reminder once at its time and marks it triggered', async () => {
    const r = await f.reminders.create('agt_a', { title: 'stand up', trigger: { type: 'scheduled', at: '2026-11-22T09:30:00Z' } })
    expect((await tickAt('2026-11-22T09:29:59Z')).fired).toBe(0)
    expect((await tickAt('2026-11-22T09:30:00.400Z')).fired).toBe(1)
    expect((await tickAt('2026-11-22T09:30:01Z')).fired).toBe(0)
    const m = await messages()
    expect(m).toHaveLength(1)
    expect(m[0]!.data).toMatchObject({ scheduled_for: '2026-11-22T09:30:00.000Z', late: false, reminder: { id: r.id, status: 'triggered', next_fire_at: null } })
    expect(await f.reminders.get('agt_a', r.id)).toMatchObject({ status: 'triggered', last_fired_at: '2026-11-22T09:30:00.400Z' })
  })

  it('keeps a recurring reminder pending and advances it occurrence by occurrence', async () => {
    const r = await f.reminders.create('agt_a', { title: 'hourly', trigger: { type: 'recurring', cron: '0 * * * *' } })
    await tickAt('2026-11-22T10:00:00Z')
    await tickAt('2026-11-22T11:00:00.500Z')
    expect((await messages()).map((m) => m.data.scheduled_for)).toEqual(['2026-11-22T10:00:00.000Z', '2026-11-22T11:00:00.000Z'])
    expect(await f.reminders.get('agt_a', r.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-22T12:00:00.000Z' })
  })

  it('applies missed_policy after downtime: once, skip, all', async () => {
    const mk = async (p: 'once' | 'skip' | 'all') => (await f.reminders.create('agt_a', { title: p, missed_policy: p, trigger: { type: 'recurring', cron: '0 * * * *' } })).id
    const ids = { once: await mk('once'), skip: await mk('skip'), all: await mk('all') }
    // Down from 09:00 to 15:30: occurrences 10:00 … 15:00 were missed.
    await tickAt('2026-11-22T15:30:00Z')
    const by = async (id: string) => (await messages()).filter((m) => m.data.reminder.id === id).map((m) => [m.data.scheduled_for.slice(11, 16), m.data.late])
    expect(await by(ids.once)).toEqual([['15:00', true]])
    expect(await by(ids.skip)).toEqual([])
    expect(await by(ids.all)).toEqual(['10:00', '11:00', '12:00', '13:00', '14:00', '15:00'].map((t) => [t, true]))
    for (const id of Object.values(ids)) expect((await f.reminders.get('agt_a', id)).next_fire_at).toBe('2026-11-22T16:00:00.000Z')
    await tickAt('2026-11-22T15:30:00Z')
    expect(await messages()).toHaveLength(7)
    await tickAt('2026-11-22T16:00:00Z')
    expect(await by(ids.skip)).toEqual([['16:00', false]])
  })

  it('skips a one-shot missed long ago under skip, and fires it late under once', async () => {
    const skip = await f.reminders.create('agt_a', { title: 's', missed_policy: 'skip', trigger: { type: 'scheduled', at: '2026-11-22T09:10:00Z' } })
    const once = await f.reminders.create('agt_a', { title: 'o', trigger: { type: 'scheduled', at: '2026-11-22T09:10:00Z' } })
    await tickAt('2026-11-22T12:00:00Z')
    expect((await messages()).map((m) => [m.data.reminder.id, m.data.late])).toEqual([[once.id, true]])
    expect(await f.reminders.get('agt_a', skip.id)).toMatchObject({ status: 'pending', next_fire_at: null })
  })

  it('never fires the same occurrence twice, even when re-planned onto it', async () => {
    const r = await f.reminders.create('agt_a', { title: 'h', trigger: { type: 'recurring', cron: '0 * * * *' } })
    await tickAt('2026-11-22T10:00:00Z')
    await f.db.run('UPDATE reminders SET next_fire_at = ? WHERE id = ?', [at('2026-11-22T10:00:00Z'), r.id])
    await tickAt('2026-11-22T10:00:30Z')
    expect(await messages()).toHaveLength(1)
    expect(await f.db.get('SELECT count(*) AS n FROM reminder_fires')).toEqual({ n: 1 })
  })

  it('fires a snoozed reminder at snooze_until', async () => {
    const r = await f.reminders.create('agt_a', { title: 'z', trigger: { type: 'scheduled', at: '2026-11-22T09:05:00Z' } })
    await f.reminders.snooze('agt_a', r.id, { until: '2026-11-22T11:00:00Z' })
    expect((await tickAt('2026-11-22T09:05:00Z')).fired).toBe(0)
    await tickAt('2026-11-22T11:00:00Z')
    expect((await messages()).map((m) => [m.data.scheduled_for, m.data.late, m.data.reminder.status])).toEqual([['2026-11-22T11:00:00.000Z', false, 'triggered']])
  })

  it('follows DST in America/New_York: spring-forward gap fires at 03:00, fall-back overlap fires once', async () => {
    f.setNow('2026-03-07T12:00:00Z')
    const spring = await f.reminders.create('agt_a', {
      title: 'gap',
      trigger: { type: 'recurring', cron: '30 2 * * *', timezone: 'America/New_York' },
    })
    expect((await f.reminders.get('agt_a', spring.id)).next_fire_at).toBe('2026-03-08T07:00:00.000Z') // 03:00 EDT
    await tickAt('2026-03-08T07:00:00Z')
    expect((await f.reminders.get('agt_a', spring.id)).next_fire_at).toBe('2026-03-09T06:30:00.000Z') // 02:30 EDT
    f.setNow('2026-10-31T12:00:00Z')
    const fall = await f.reminders.create('agt_a', {
      title: 'overlap',
      trigger: { type: 'recurring', cron: '30 1 * * *', timezone: 'America/New_York' },
    })
    expect((await f.reminders.get('agt_a', fall.id)).next_fire_at).toBe('2026-11-01T05:30:00.000Z') // 01:30 EDT
    await tickAt('2026-11-01T05:30:00Z')
    await tickAt('2026-11-01T06:30:00Z') // 01:30 EST, the repeated hour: nothing due
    const fallFires = (await messages()).filter((m) => m.data.reminder.id === fall.id)
    expect(fallFires.map((m) => m.data.scheduled_for)).toEqual(['2026-11-01T05:30:00.000Z'])
    expect((await f.reminders.get('agt_a', fall.id)).next_fire_at).toBe('2026-11-02T06:30:00.000Z') // 01:30 EST
  })

  it('holds non-urgent fires during quiet hours until they end, keeping scheduled_for', async () => {
    await f.settings.put('agt_a', { timezone: 'America/New_York', quiet_hours: { start: '22:00', end: '07:00' } })
    // 23:00 New York = 04:00Z next day.
    const normal = await f.reminders.create('agt_a', { title: 'n', trigger: { type: 'scheduled', at: '2026-11-23T04:00:00Z' } })
    const urgent = await f.reminders.create('agt_a', { title: 'u', priority: 'urgent', trigger: { type: 'scheduled', at: '2026-11-23T04:00:00Z' } })
    const exempt = await f.reminders.create('agt_a', { title: 'e', quiet_hours_exempt: true, trigger: { type: 'scheduled', at: '2026-11-23T04:00:00Z' } })
    const res = await tickAt('2026-11-23T04:00:00Z')
    expect(res).toMatchObject({ fired: 2, held: 1 })
    expect((await messages()).map((m) => m.data.reminder.id).sort()).toEqual([urgent.id, exempt.id].sort())
    expect(await f.reminders.get('agt_a', normal.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-23T12:00:00.000Z' })
    expect((await tickAt('2026-11-23T11:59:59Z')).fired).toBe(0)
    await tickAt('2026-11-23T12:00:00Z')
    const held = (await messages()).find((m) => m.data.reminder.id === normal.id)!
    expect(held.data).toMatchObject({ scheduled_for: '2026-11-23T04:00:00.000Z', late: true, reminder: { status: 'triggered' } })
  })

  // 3–7 s on PostgreSQL alone; beside the rest of the suite on two shared cores it passed 20 s.
  it('fires 2,000 due reminders in batches, each exactly once', { timeout: 60_000 }, async () => {
    const due = at('2026-11-22T10:00:00Z')
    await insertDue(f.db, 'agt_a', 2_000, due)
    let fired = 0
    for (let i = 0; i < 10 && fired < 2_000; i++) fired += (await tickAt('2026-11-22T10:00:00Z')).fired
    expect(fired).toBe(2_000)
    expect(await f.db.get('SELECT count(*) AS n FROM reminder_fires')).toEqual({ n: 2_000 })
  })

  it('stop() waits for the tick under way: its reminder is fired and its claim given back before stop returns', async () => {
    const r = await f.reminders.create('agt_a', { title: 'stand up', trigger: { type: 'scheduled', at: '2026-11-22T09:30:00Z' } })
    f.setNow('2026-11-22T09:30:00.200Z')
    const parts = reminderParts(f.db, f.clock)
    const claimed = parts.repo.claimed.bind(parts.repo)
    let entered!: () => void
    const inTick = new Promise<void>((resolve) => (entered = resolve))
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    // The tick holds its fire transaction open until the test lets it go.
    parts.repo.claimed = async (claim: Claim) => {
      entered()
      await gate
      return claimed(claim)
    }
    const errors: unknown[] = []
    const running = new Ticker({ ...parts, clock: f.clock, onError: (err) => errors.push(err) })
    running.start()
    await inTick
    let stopped = false
    const stopping = running.stop().then(() => (stopped = true))
    await new Promise((resolve) => setTimeout(resolve, 100))
    const stoppedMidTick = stopped
    release()
    await stopping
    expect(stoppedMidTick).toBe(false)
    expect(errors).toEqual([])
    expect((await messages()).map((m) => m.data.reminder.id)).toEqual([r.id])
    expect(await f.db.get('SELECT status, claimed_until FROM reminders WHERE id = ?', [r.id])).toEqual({ status: 'triggered', claimed_until: null })
  })

  it('stop() right after start() waits for the recovery of delivery claims before the dispatcher stops', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const calls: string[] = []
    const dispatcher = {
      recover: async () => {
        calls.push('recover')
        await gate
        calls.push('recovered')
      },
      stop: async () => {
        calls.push('stop')
      },
    } as unknown as Dispatcher
    const running = new Ticker({ ...reminderParts(f.db, f.clock), clock: f.clock, dispatcher })
    running.start()
    const stopping = running.stop()
    await new Promise((resolve) => setTimeout(resolve, 50))
    release()
    await stopping
    expect(calls).toEqual(['recover', 'recovered', 'stop'])
  })
})
