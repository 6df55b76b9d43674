import { afterEach, describe, expect, it, vi } from 'vitest'
import type { DbHandle } from '../../src/db/client.js'
import { ReminderRepository, type Claim } from '../../src/reminders/repository.js'
import { RemindersService } from '../../src/reminders/service.js'
import { SettingsService } from '../../src/reminders/settings.js'
import { Ticker } from '../../src/reminders/ticker.js'
import { backend, sqliteOf } from '../helpers.js'
import { announced, twoHandles } from './two-handles.js'
import { reminderParts } from './fixtures.js'

/**
 * The scheduler's two promises, each checked so that removing what keeps it fails a test:
 * an occurrence is announced once however many fires race for it, and a fire's state change,
 * outbox message and fire record commit together or not at all.
 */
afterEach(() => {
  vi.restoreAllMocks()
})

const at = (iso: string) => Date.parse(iso)

describe('each occurrence is announced once', () => {
  it('two tickers: one whose lease ran out before it fired finds its claims retaken and fires nothing', async () => {
    const [one, two] = await twoHandles()
    const clock = () => at('2026-11-22T10:00:00.200Z')
    const reminders = new RemindersService(new ReminderRepository(one.db), new SettingsService(new ReminderRepository(one.db), clock), () => at('2026-11-22T09:00:00Z'))
    const hourly = await reminders.create('agt_a', { title: 'hourly', trigger: { type: 'recurring', cron: '0 * * * *' } })
    const once = await reminders.create('agt_a', { title: 'once', trigger: { type: 'scheduled', at: '2026-11-22T10:00:00Z' } })
    await one.db.committed()
    const tickerOne = new Ticker({ ...reminderParts(one.db, clock), clock, leaseMs: 1_000 })
    const tickerTwo = new Ticker({ ...reminderParts(two.db, clock), clock, leaseMs: 1_000 })

    // Ticker one claims; before it fires, it stalls past its lease and ticker two retakes and fires them all.
    const claim = ReminderRepository.prototype.claimDue
    let raced = false
    vi.spyOn(ReminderRepository.prototype, 'claimDue').mockImplementation(async function (this: ReminderRepository, now: number, until: number, limit: number): Promise<Claim[]> {
      const claims = await claim.call(this, now, until, limit)
      if (this.db === one.db && claims.length > 0 && !raced) {
        raced = true
        await one.db.committed()
        expect((await tickerTwo.tick(now + 500)).fired).toBe(0) // the lease still holds
        expect((await tickerTwo.tick(until)).fired).toBe(2)
        await two.db.committed()
      }
      return claims
    })
    expect((await tickerOne.tick(clock())).fired).toBe(0)
    expect(raced).toBe(true)

    const expected = [
      { id: hourly.id, scheduled_for: '2026-11-22T10:00:00.000Z' },
      { id: once.id, scheduled_for: '2026-11-22T10:00:00.000Z' },
    ].sort((a, b) => a.id.localeCompare(b.id))
    expect((await announced(one)).sort((a, b) => a.id.localeCompare(b.id))).toEqual(expected)
    expect(await one.db.get('SELECT count(*) AS n FROM reminder_fires')).toEqual({ n: 2 })
    expect(await reminders.get('agt_a', hourly.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-22T11:00:00.000Z' })
  })
})

describe('a fire and its outbox message commit together', () => {
  /** Makes every outbox insert fail, as a full disk or a broken table would, until `restore()`. */
  async function breakOutbox(h: DbHandle): Promise<{ restore: () => Promise<void> }> {
    if (backend === 'postgres') {
      await h.db.run(`CREATE FUNCTION outbox_down() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'outbox down'; END $$`)
      await h.db.run('CREATE TRIGGER outbox_down BEFORE INSERT ON webhook_messages FOR EACH ROW EXECUTE FUNCTION outbox_down()')
      return { restore: async () => void (await h.db.run('DROP TRIGGER outbox_down ON webhook_messages')) }
    }
    const sqlite = sqliteOf(h)
    await h.db.committed()
    sqlite.exec("CREATE TRIGGER outbox_down BEFORE INSERT ON webhook_messages BEGIN SELECT RAISE(ABORT, 'outbox down'); END")
    return { restore: async () => void sqlite.exec('DROP TRIGGER outbox_down') }
  }
  const state = async (h: DbHandle) => ({
    reminders: await h.db.all('SELECT id, status, next_fire_at, last_fired_at, triggered_at, updated_at, claimed_until FROM reminders ORDER BY id'),
    fires: await h.db.all('SELECT * FROM reminder_fires'),
    holds: await h.db.all('SELECT * FROM reminder_holds'),
    messages: await h.db.get('SELECT count(*) AS n FROM webhook_messages'),
    deliveries: await h.db.get('SELECT count(*) AS n FROM webhook_deliveries'),
  })

  it('the ticker: a failed outbox write leaves the batch unfired (claimed), and its next tick fires it once, within the lease', async () => {
    const [h] = await twoHandles()
    const clock = () => at('2026-11-22T10:00:00.200Z')
    const reminders = new RemindersService(new ReminderRepository(h.db), new SettingsService(new ReminderRepository(h.db), clock), () => at('2026-11-22T09:00:00Z'))
    const hourly = await reminders.create('agt_a', { title: 'hourly', trigger: { type: 'recurring', cron: '0 * * * *' } })
    await reminders.create('agt_a', { title: 'once', trigger: { type: 'scheduled', at: '2026-11-22T09:59:00Z' } })
    const ticker = new Ticker({ ...reminderParts(h.db, clock), clock, leaseMs: 1_000 })
    const before = await state(h)
    const outbox = await breakOutbox(h)
    await expect(ticker.tick(clock())).rejects.toThrow(/outbox down/)
    // Nothing fired; only the claims stand, until their lease runs out.
    const after = await state(h)
    expect(after.reminders.map((r) => (r as { claimed_until: number }).claimed_until)).toEqual([clock() + 1_000, clock() + 1_000])
    expect({ ...after, reminders: after.reminders.map((r) => ({ ...(r as object), claimed_until: null })) }).toEqual(before)
    await outbox.restore()
    // The claims are still this ticker's: it fires them at once, not after the lease.
    expect((await ticker.tick(clock())).fired).toBe(2)
    expect((await ticker.tick(clock() + 1_000)).fired).toBe(0)
    expect(await announced(h)).toHaveLength(2)
    expect((await reminders.get('agt_a', hourly.id)).next_fire_at).toBe('2026-11-22T11:00:00.000Z')
  })

  it('trigger now: a failed outbox write leaves the reminder as it was', async () => {
    const [h] = await twoHandles()
    const reminders = new RemindersService(new ReminderRepository(h.db), new SettingsService(new ReminderRepository(h.db), () => 0), () => at('2026-11-22T09:00:00Z'))
    const r = await reminders.create('agt_a', { title: 'pay', trigger: { type: 'scheduled', at: '2026-11-23T09:00:00Z' } })
    const before = await state(h)
    const outbox = await breakOutbox(h)
    await expect(reminders.trigger('agt_a', r.id)).rejects.toThrow(/outbox down/)
    expect(await state(h)).toEqual(before)
    await outbox.restore()
    expect((await reminders.trigger('agt_a', r.id)).status).toBe('triggered')
    expect(await announced(h)).toEqual([{ id: r.id, scheduled_for: '2026-11-22T09:00:00.000Z' }])
  })
})
