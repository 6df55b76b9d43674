/**
 * The one way a reminder fires, whoever fires it (the ticker, `POST /v1/reminders/{id}/trigger`,
 * `POST /v1/turns`). The caller holds the transaction, so the new state, the outbox messages and
 * the fire records commit together.
 */
import type Database from 'better-sqlite3'
import { isoAt } from '../engine/clock.js'
import { enqueue } from '../webhooks/outbox.js'
import { toReminder, type Reminder, type ReminderRow } from './model.js'
import { firedColumns } from './schedule.js'
import { perConnection } from '../db/lazy-statement.js'

/** One occurrence a fire announces as `reminder.triggered`. */
export interface AnnouncedFire {
  scheduled_for: number
  late: boolean
}

interface Statements {
  update: Database.Statement
  claim: Database.Statement
  exists: Database.Statement<[string, number], { n: number }>
}

// Prepared once per connection: the ticker fires thousands of reminders a second through here.
const statements = perConnection(
  (sqlite): Statements => ({
    // Only the columns a fire changes, so indexes on the others are left alone.
    update: sqlite.prepare(`UPDATE reminders SET status = @status, triggered_at = @triggered_at,
      last_fired_at = @last_fired_at, snooze_until = @snooze_until, next_fire_at = @next_fire_at,
      updated_at = @updated_at WHERE agent_id = @agent_id AND id = @id`),
    claim: sqlite.prepare(`INSERT INTO reminder_fires (reminder_id, scheduled_for, agent_id, message_id, fired_at, late)
      VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
    exists: sqlite.prepare('SELECT 1 AS n FROM reminder_fires WHERE reminder_id = ? AND scheduled_for = ?'),
  }),
)

/**
 * Fires `row` at `nowMs`: writes `firedColumns` (recurring stays pending with its next occurrence
 * after now, a one-shot becomes triggered), then announces each of `announce` as one
 * `reminder.triggered` outbox message plus a `reminder_fires` record keyed by
 * (reminder, scheduled_for). An instant already recorded is skipped, message included, so no
 * occurrence is announced twice. Returns the reminder as it is after the fire.
 */
export function fireReminder(
  sqlite: Database.Database,
  row: ReminderRow,
  nowMs: number,
  agentTz: string,
  announce: readonly AnnouncedFire[],
): { reminder: Reminder; announced: number } {
  const s = statements(sqlite)
  const after: ReminderRow = { ...row, ...firedColumns(row, nowMs, agentTz), updated_at: nowMs }
  s.update.run({
    id: after.id, agent_id: after.agent_id, status: after.status, triggered_at: after.triggered_at,
    last_fired_at: after.last_fired_at, snooze_until: after.snooze_until, next_fire_at: after.next_fire_at,
    updated_at: after.updated_at,
  })
  const reminder = toReminder(after)
  let announced = 0
  for (const f of announce) {
    if (s.exists.get(row.id, f.scheduled_for)) continue
    const data = { reminder, scheduled_for: isoAt(f.scheduled_for), late: f.late }
    const msg = enqueue(sqlite, row.agent_id, 'reminder.triggered', data, nowMs)
    s.claim.run(row.id, f.scheduled_for, row.agent_id, msg.message_id, nowMs, f.late ? 1 : 0)
    announced++
  }
  return { reminder, announced }
}
