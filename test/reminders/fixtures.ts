import { openDb, type DbHandle } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { RemindersService } from '../../src/reminders/service.js'
import { ReminderSearch } from '../../src/reminders/search.js'
import { SettingsService } from '../../src/reminders/settings.js'
import { subscribeToEvents } from '../helpers.js'
import { AppError } from '../../src/errors.js'

/** A migrated in-memory database, two agents subscribed to every event, the reminder services and a settable clock. */
export function reminderFixture(startIso = '2026-11-22T09:00:00.000Z') {
  const handle: DbHandle = openDb(':memory:')
  runMigrations(handle)
  const time = { now: Date.parse(startIso) }
  const clock = () => time.now
  for (const id of ['agt_a', 'agt_b']) {
    handle.sqlite.prepare('INSERT INTO agents (id, name, created_at) VALUES (?, ?, 0)').run(id, id)
    subscribeToEvents(handle.sqlite, id)
  }
  const settings = new SettingsService(handle.sqlite, clock)
  const reminders = new RemindersService(handle.sqlite, settings, clock)
  const search = new ReminderSearch(reminders.store)
  return {
    handle,
    time,
    clock,
    settings,
    reminders,
    search,
    setNow: (iso: string) => {
      time.now = Date.parse(iso)
    },
    advance: (minutes: number) => {
      time.now += minutes * 60_000
    },
  }
}

/** The HTTP status a service call ends with: 200, or the status of the AppError it throws. */
export function statusOf(fn: () => unknown): number {
  try {
    fn()
  } catch (err) {
    if (err instanceof AppError) return err.status
    throw err
  }
  return 200
}
