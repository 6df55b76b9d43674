import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openDb, type DbHandle } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import type { ReminderRow } from '../../src/reminders/model.js'
import { ReminderStore } from '../../src/reminders/repository.js'
import { RemindersService } from '../../src/reminders/service.js'
import { SettingsService } from '../../src/reminders/settings.js'
import { Ticker } from '../../src/reminders/ticker.js'
import { subscribeToEvents } from '../helpers.js'

/**
 * The scheduler's two promises, each checked so that removing what keeps it fails a test:
 * an occurrence is announced once however many fires race for it, and a fire's state change,
 * outbox message and fire record commit together or not at all.
 */
const dirs: string[] = []
const handles: DbHandle[] = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const h of handles.splice(0)) h.close()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const at = (iso: string) => Date.parse(iso)

/** Two connections to one fresh database file (two server processes, as far as SQLite can tell). */
function twoConnections(): [DbHandle, DbHandle] {
  const dir = mkdtempSync(join(tmpdir(), 'gk-guarantees-'))
  dirs.push(dir)
  const path = join(dir, 'gk.db')
  const first = openDb(path)
  runMigrations(first)
  first.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_a', 'a', 0)").run()
  subscribeToEvents(first.sqlite, 'agt_a')
  const second = openDb(path)
  handles.push(first, second)
  return [first, second]
}

function announced(h: DbHandle): { id: string; scheduled_for: string }[] {
  const rows = h.sqlite.prepare("SELECT payload FROM webhook_messages WHERE event_type = 'reminder.triggered' ORDER BY rowid").all() as { payload: string }[]
  return rows.map((r) => JSON.parse(r.payload) as { data: { reminder: { id: string }; scheduled_for: string } }).map((m) => ({ id: m.data.reminder.id, scheduled_for: m.data.scheduled_for }))
}

describe('each occurrence is announced once', () => {
  it('two tickers on two connections: one works from rows read before the other fired them', () => {
    const [one, two] = twoConnections()
    const clock = () => at('2026-11-22T10:00:00.200Z')
    const reminders = new RemindersService(one.sqlite, new SettingsService(one.sqlite, clock), () => at('2026-11-22T09:00:00Z'))
    const hourly = reminders.create('agt_a', { title: 'hourly', trigger: { type: 'recurring', cron: '0 * * * *' } })
    const once = reminders.create('agt_a', { title: 'once', trigger: { type: 'scheduled', at: '2026-11-22T10:00:00Z' } })
    const tickerOne = new Ticker({ handle: one, clock })
    const tickerTwo = new Ticker({ handle: two, clock })

    // Ticker one scans the due rows; before it applies them, ticker two (the other process) fires them all.
    const scan = ReminderStore.prototype.dueAll
    let raced = false
    vi.spyOn(ReminderStore.prototype, 'dueAll').mockImplementation(function (this: ReminderStore, asOf: number, limit: number): ReminderRow[] {
      const rows = scan.call(this, asOf, limit)
      if (this.sqlite === one.sqlite && rows.length > 0 && !raced) {
        raced = true
        expect(tickerTwo.tick(asOf).fired).toBe(2)
      }
      return rows
    })
    expect(tickerOne.tick(clock()).fired).toBe(0)
    expect(raced).toBe(true)

    const expected = [
      { id: hourly.id, scheduled_for: '2026-11-22T10:00:00.000Z' },
      { id: once.id, scheduled_for: '2026-11-22T10:00:00.000Z' },
    ]
    expect(announced(one).sort((a, b) => a.id.localeCompare(b.id))).toEqual(expected.sort((a, b) => a.id.localeCompare(b.id)))
    expect(one.sqlite.prepare('SELECT count(*) AS n FROM reminder_fires').get()).toEqual({ n: 2 })
    expect(reminders.get('agt_a', hourly.id)).toMatchObject({ status: 'pending', next_fire_at: '2026-11-22T11:00:00.000Z' })
  })
})

describe('a fire and its outbox message commit together', () => {
  /** Makes every outbox insert fail, as a full disk or a broken table would, until `restore()`. */
  function breakOutbox(h: DbHandle): { restore: () => void } {
    h.sqlite.exec("CREATE TRIGGER outbox_down BEFORE INSERT ON webhook_messages BEGIN SELECT RAISE(ABORT, 'outbox down'); END")
    return { restore: () => h.sqlite.exec('DROP TRIGGER outbox_down') }
  }
  const state = (h: DbHandle) => ({
    reminders: h.sqlite.prepare('SELECT id, status, next_fire_at, last_fired_at, triggered_at, updated_at FROM reminders ORDER BY id').all(),
    fires: h.sqlite.prepare('SELECT * FROM reminder_fires').all(),
    holds: h.sqlite.prepare('SELECT * FROM reminder_holds').all(),
    messages: h.sqlite.prepare('SELECT count(*) AS n FROM webhook_messages').get(),
    deliveries: h.sqlite.prepare('SELECT count(*) AS n FROM webhook_deliveries').get(),
  })

  it('the ticker: a failed outbox write leaves the batch unfired, and the next tick fires it once', () => {
    const [h] = twoConnections()
    const clock = () => at('2026-11-22T10:00:00.200Z')
    const reminders = new RemindersService(h.sqlite, new SettingsService(h.sqlite, clock), () => at('2026-11-22T09:00:00Z'))
    const hourly = reminders.create('agt_a', { title: 'hourly', trigger: { type: 'recurring', cron: '0 * * * *' } })
    reminders.create('agt_a', { title: 'once', trigger: { type: 'scheduled', at: '2026-11-22T09:59:00Z' } })
    const ticker = new Ticker({ handle: h, clock })
    const before = state(h)
    const outbox = breakOutbox(h)
    expect(() => ticker.tick(clock())).toThrow(/outbox down/)
    expect(state(h)).toEqual(before)
    outbox.restore()
    expect(ticker.tick(clock()).fired).toBe(2)
    expect(ticker.tick(clock()).fired).toBe(0)
    expect(announced(h)).toHaveLength(2)
    expect(reminders.get('agt_a', hourly.id).next_fire_at).toBe('2026-11-22T11:00:00.000Z')
  })

  it('trigger now: a failed outbox write leaves the reminder as it was', () => {
    const [h] = twoConnections()
    const reminders = new RemindersService(h.sqlite, new SettingsService(h.sqlite, () => 0), () => at('2026-11-22T09:00:00Z'))
    const r = reminders.create('agt_a', { title: 'pay', trigger: { type: 'scheduled', at: '2026-11-23T09:00:00Z' } })
    const before = state(h)
    const outbox = breakOutbox(h)
    expect(() => reminders.trigger('agt_a', r.id)).toThrow(/outbox down/)
    expect(state(h)).toEqual(before)
    outbox.restore()
    expect(reminders.trigger('agt_a', r.id).status).toBe('triggered')
    expect(announced(h)).toEqual([{ id: r.id, scheduled_for: '2026-11-22T09:00:00.000Z' }])
  })
})
