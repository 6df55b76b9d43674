import type { DbHandle } from '../../src/db/client.js'
import type { SqlDatabase } from '../../src/db/database.js'
import type { Clock } from '../../src/engine/clock.js'
import { ReminderRepository } from '../../src/reminders/repository.js'
import { RemindersService } from '../../src/reminders/service.js'
import { ReminderSearch } from '../../src/reminders/search.js'
import { SettingsService } from '../../src/reminders/settings.js'
import { openTestDatabase, subscribeToEvents } from '../helpers.js'
import { AppError } from '../../src/errors.js'

/** A migrated database of the run's backend, two agents subscribed to every event, the reminder services and a settable clock. */
export async function reminderFixture(startIso = '2026-11-22T09:00:00.000Z') {
  const handle: DbHandle = await openTestDatabase()
  const db = handle.db
  const time = { now: Date.parse(startIso) }
  const clock = () => time.now
  for (const id of ['agt_a', 'agt_b']) {
    await db.run('INSERT INTO agents (id, name, created_at) VALUES (?, ?, 0)', [id, id])
    await subscribeToEvents(db, id)
  }
  const settings = new SettingsService(new ReminderRepository(db), clock)
  const repo = new ReminderRepository(db)
  const reminders = new RemindersService(repo, settings, clock)
  const search = new ReminderSearch(repo)
  return {
    handle,
    db,
    time,
    clock,
    settings,
    repo,
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

export type ReminderFixture = Awaited<ReturnType<typeof reminderFixture>>

/** The HTTP status a service call ends with: 200, or the status of the AppError it throws. */
export async function statusOf(fn: () => unknown): Promise<number> {
  try {
    await fn()
  } catch (err) {
    if (err instanceof AppError) return err.status
    throw err
  }
  return 200
}

/** Inserts `n` due one-shot reminders of `agentId` straight into the table (doc_id on SQLite), in one transaction. */
export async function insertDue(db: DbHandle['db'], agentId: string, n: number, dueMs: number, prefix = 'rem_'): Promise<string[]> {
  const ids: string[] = []
  const docId = db.dialect === 'sqlite' ? 'doc_id, ' : ''
  await db.transaction(async () => {
    for (let i = 0; i < n; i++) {
      const id = `${prefix}${String(i).padStart(6, '0')}`
      ids.push(id)
      await db.run(
        `INSERT INTO reminders (id, ${docId}agent_id, title, body, trigger_type, trigger_at, status,
        priority, context_tags, quiet_hours_exempt, missed_policy, created_at, updated_at, next_fire_at)
        VALUES (?, ${db.dialect === 'sqlite' ? '?, ' : ''}?, 't', '', 'scheduled', ?, 'pending', 'normal', '[]', ?, 'once', 0, 0, ?)`,
        db.dialect === 'sqlite' ? [id, i + 1, agentId, dueMs, 0, dueMs] : [id, agentId, dueMs, false, dueMs],
      )
    }
  })
  return ids
}

/** What a Ticker reads and writes through on `db`: the reminders' repository and the agents' settings. */
export function reminderParts(db: SqlDatabase, clock: Clock): { repo: ReminderRepository; settings: SettingsService } {
  const repo = new ReminderRepository(db)
  return { repo, settings: new SettingsService(repo, clock) }
}
