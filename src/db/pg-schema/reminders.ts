import { sql } from 'drizzle-orm'
import { boolean, check, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'
import { agents } from './agents.js'
import { id, ms, tsvector } from './columns.js'
import { sessions } from './sessions.js'

/**
 * Reminders. Full-text search needs no side index here: two generated tsvector columns with GIN
 * indexes (English stemming, like SQLite's porter tokenizer) replace SQLite's FTS5 tables, their
 * triggers and the per-agent doc-id blocks.
 */
export const reminders = pgTable(
  'reminders',
  {
    id: id('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    // Ownership is checked on write; deleting the session unlinks its reminders.
    sessionId: text('session_id').references(() => sessions.id, { onDelete: 'set null' }),
    title: text('title').notNull(),
    body: text('body').notNull().default(''),
    triggerType: text('trigger_type', { enum: ['scheduled', 'recurring', 'context'] }).notNull(),
    triggerAt: ms('trigger_at'),
    triggerCron: text('trigger_cron'),
    triggerTimezone: text('trigger_timezone'),
    triggerPattern: text('trigger_pattern'),
    status: text('status', { enum: ['pending', 'triggered', 'completed', 'dismissed', 'snoozed'] })
      .notNull()
      .default('pending'),
    priority: text('priority', { enum: ['urgent', 'normal', 'low'] })
      .notNull()
      .default('normal'),
    contextTags: text('context_tags').notNull().default('[]'),
    quietHoursExempt: boolean('quiet_hours_exempt').notNull().default(false),
    missedPolicy: text('missed_policy', { enum: ['once', 'skip', 'all'] })
      .notNull()
      .default('once'),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
    triggeredAt: ms('triggered_at'),
    completedAt: ms('completed_at'),
    snoozeUntil: ms('snooze_until'),
    lastFiredAt: ms('last_fired_at'),
    nextFireAt: ms('next_fire_at'),
    // A ticker's lease on the due reminder (schema/reminders.ts): replicas claim with SKIP LOCKED.
    claimedUntil: ms('claimed_until'),
    // Search ranks title over body over tags and pattern.
    searchDoc: tsvector('search_doc')
      .notNull()
      .generatedAlwaysAs(
        sql`setweight(to_tsvector('english'::regconfig, title), 'A') || setweight(to_tsvector('english'::regconfig, body), 'B') || setweight(to_tsvector('english'::regconfig, context_tags || ' ' || coalesce(trigger_pattern, '')), 'C')`,
      ),
    // What a turn's message is matched against for context-triggered reminders.
    contextDoc: tsvector('context_doc')
      .notNull()
      .generatedAlwaysAs(sql`to_tsvector('english'::regconfig, context_tags || ' ' || coalesce(trigger_pattern, ''))`),
  },
  (t) => [
    index('reminders_next_fire_idx')
      .on(t.nextFireAt)
      .where(sql`${t.nextFireAt} IS NOT NULL`),
    index('reminders_agent_due_idx')
      .on(t.agentId, t.nextFireAt)
      .where(sql`${t.nextFireAt} IS NOT NULL`),
    index('reminders_agent_id_idx').on(t.agentId, t.id),
    index('reminders_agent_status_idx').on(t.agentId, t.status, t.id),
    index('reminders_agent_priority_idx').on(t.agentId, t.priority, t.id),
    index('reminders_agent_trigger_idx').on(t.agentId, t.triggerType, t.id),
    index('reminders_session_idx')
      .on(t.sessionId)
      .where(sql`${t.sessionId} IS NOT NULL`),
    index('reminders_search_idx').using('gin', t.searchDoc),
    index('reminders_context_idx')
      .using('gin', t.contextDoc)
      .where(sql`${t.triggerType} = 'context'`),
    check('reminders_trigger_type_check', sql`${t.triggerType} IN ('scheduled', 'recurring', 'context')`),
    check('reminders_status_check', sql`${t.status} IN ('pending', 'triggered', 'completed', 'dismissed', 'snoozed')`),
    check('reminders_priority_check', sql`${t.priority} IN ('urgent', 'normal', 'low')`),
    check('reminders_missed_policy_check', sql`${t.missedPolicy} IN ('once', 'skip', 'all')`),
  ],
)

export const agentSettings = pgTable('agent_settings', {
  agentId: text('agent_id')
    .primaryKey()
    .references(() => agents.id, { onDelete: 'cascade' }),
  timezone: text('timezone').notNull().default('UTC'),
  quietStart: text('quiet_start'),
  quietEnd: text('quiet_end'),
  maxReminders: integer('max_reminders').notNull().default(100),
  injectionBudgetTokens: integer('injection_budget_tokens').notNull().default(1500),
  /** SessionConfigInput JSON: the config of sessions goalkeeper opens itself (coding-agent hooks). */
  sessionDefaults: text('session_defaults').notNull().default('{}'),
  /** HookSettings JSON (src/hooks/settings.ts). */
  hooks: text('hooks').notNull().default('{}'),
  dailyBudget: text('daily_budget').notNull().default('{}'),
  updatedAt: ms('updated_at').notNull(),
})

/** The primary key (reminder_id, scheduled_for) is the claim of one occurrence, across replicas too. */
export const reminderFires = pgTable(
  'reminder_fires',
  {
    reminderId: text('reminder_id')
      .notNull()
      .references(() => reminders.id, { onDelete: 'cascade' }),
    scheduledFor: ms('scheduled_for').notNull(),
    agentId: text('agent_id').notNull(),
    messageId: text('message_id').notNull(),
    firedAt: ms('fired_at').notNull(),
    late: boolean('late').notNull(),
  },
  (t) => [primaryKey({ columns: [t.reminderId, t.scheduledFor] })],
)

export const reminderHolds = pgTable('reminder_holds', {
  reminderId: text('reminder_id')
    .primaryKey()
    .references(() => reminders.id, { onDelete: 'cascade' }),
  scheduledFor: ms('scheduled_for').notNull(),
  heldAt: ms('held_at').notNull(),
})
