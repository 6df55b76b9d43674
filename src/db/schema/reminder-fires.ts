import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { reminders } from './reminders.js'

/**
 * One row per fired occurrence. The primary key (reminder_id, scheduled_for) is the claim: it is
 * inserted in the same transaction that writes the outbox message and advances the reminder, so
 * a crash can delay a fire but never lose or double it.
 */
export const reminderFires = sqliteTable(
  'reminder_fires',
  {
    reminderId: text('reminder_id')
      .notNull()
      .references(() => reminders.id, { onDelete: 'cascade' }),
    scheduledFor: integer('scheduled_for').notNull(),
    agentId: text('agent_id').notNull(),
    messageId: text('message_id').notNull(),
    firedAt: integer('fired_at').notNull(),
    late: integer('late', { mode: 'boolean' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.reminderId, t.scheduledFor] })],
)

/**
 * A fire held back by quiet hours: the reminder's `next_fire_at` moves to the end of the quiet
 * hours while the occurrence it owes keeps its `scheduled_for` here. A hold older than the
 * reminder's last change (a patch, snooze or re-plan) is stale and ignored.
 */
export const reminderHolds = sqliteTable('reminder_holds', {
  reminderId: text('reminder_id')
    .primaryKey()
    .references(() => reminders.id, { onDelete: 'cascade' }),
  scheduledFor: integer('scheduled_for').notNull(),
  heldAt: integer('held_at').notNull(),
})
