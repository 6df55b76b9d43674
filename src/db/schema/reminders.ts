import { sql } from 'drizzle-orm'
import { check, index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { agents } from './agents.js'

/**
 * Reminders of one agent. Times are epoch ms. `next_fire_at` is when the scheduler must fire the
 * reminder next (null when nothing is scheduled: terminal, context-triggered, or already fired
 * one-shot), so both the cross-agent ticker and per-agent "due" queries are index range scans.
 * `doc_id` is the stable integer key of the external-content FTS5 index (an implicit rowid may be
 * renumbered by VACUUM, which would silently detach the index).
 */
export const reminders = sqliteTable(
  'reminders',
  {
    id: text('id').primaryKey(),
    docId: integer('doc_id').notNull(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    /** One of the agent's own sessions (checked on write); set to null when that session is deleted. */
    sessionId: text('session_id'),
    title: text('title').notNull(),
    body: text('body').notNull().default(''),
    triggerType: text('trigger_type', { enum: ['scheduled', 'recurring', 'context'] }).notNull(),
    triggerAt: integer('trigger_at'),
    triggerCron: text('trigger_cron'),
    triggerTimezone: text('trigger_timezone'),
    triggerPattern: text('trigger_pattern'),
    status: text('status', { enum: ['pending', 'triggered', 'completed', 'dismissed', 'snoozed'] })
      .notNull()
      .default('pending'),
    priority: text('priority', { enum: ['urgent', 'normal', 'low'] })
      .notNull()
      .default('normal'),
    /** JSON array of strings. */
    contextTags: text('context_tags').notNull().default('[]'),
    quietHoursExempt: integer('quiet_hours_exempt', { mode: 'boolean' }).notNull().default(false),
    missedPolicy: text('missed_policy', { enum: ['once', 'skip', 'all'] })
      .notNull()
      .default('once'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    triggeredAt: integer('triggered_at'),
    completedAt: integer('completed_at'),
    snoozeUntil: integer('snooze_until'),
    lastFiredAt: integer('last_fired_at'),
    nextFireAt: integer('next_fire_at'),
    /**
     * A ticker's lease on the due reminder (epoch ms it ends): claimed, then fired in a later
     * transaction; a ticker that dies in between leaves the claim to expire and be retaken.
     */
    claimedUntil: integer('claimed_until'),
  },
  (t) => [
    uniqueIndex('reminders_doc_id_unique').on(t.docId),
    // The ticker's range scan across agents: only rows that have something to fire.
    index('reminders_next_fire_idx')
      .on(t.nextFireAt)
      .where(sql`${t.nextFireAt} IS NOT NULL`),
    // Per-agent due query (`/due`, turn start).
    index('reminders_agent_due_idx')
      .on(t.agentId, t.nextFireAt)
      .where(sql`${t.nextFireAt} IS NOT NULL`),
    // Lists: ids sort by creation, so (agent_id, [filter,] id) serves cursor pagination.
    index('reminders_agent_id_idx').on(t.agentId, t.id),
    index('reminders_agent_status_idx').on(t.agentId, t.status, t.id),
    index('reminders_agent_priority_idx').on(t.agentId, t.priority, t.id),
    index('reminders_agent_trigger_idx').on(t.agentId, t.triggerType, t.id),
    // Deleting a session unlinks its reminders (a trigger in migrations/0000_init.sql): a lookup, not a scan.
    index('reminders_session_idx')
      .on(t.sessionId)
      .where(sql`${t.sessionId} IS NOT NULL`),
    check('reminders_trigger_type_check', sql`${t.triggerType} IN ('scheduled', 'recurring', 'context')`),
    check('reminders_status_check', sql`${t.status} IN ('pending', 'triggered', 'completed', 'dismissed', 'snoozed')`),
    check('reminders_priority_check', sql`${t.priority} IN ('urgent', 'normal', 'low')`),
    check('reminders_missed_policy_check', sql`${t.missedPolicy} IN ('once', 'skip', 'all')`),
  ],
)

/** Per-agent settings; a missing row means all defaults (UTC, no quiet hours, 100 reminders, 1500 tokens). */
export const agentSettings = sqliteTable('agent_settings', {
  agentId: text('agent_id')
    .primaryKey()
    .references(() => agents.id, { onDelete: 'cascade' }),
  timezone: text('timezone').notNull().default('UTC'),
  /** "HH:MM" in the agent's timezone; both null or both set. */
  quietStart: text('quiet_start'),
  quietEnd: text('quiet_end'),
  maxReminders: integer('max_reminders').notNull().default(100),
  injectionBudgetTokens: integer('injection_budget_tokens').notNull().default(1500),
  /** SessionConfigInput JSON: the config of sessions goalkeeper opens itself (coding-agent hooks). */
  sessionDefaults: text('session_defaults').notNull().default('{}'),
  /** HookSettings JSON (src/hooks/settings.ts). */
  hooks: text('hooks').notNull().default('{}'),
  /** DailyBudget JSON (src/engine/detection/agent-spend.ts); '{}': none. */
  dailyBudget: text('daily_budget').notNull().default('{}'),
  updatedAt: integer('updated_at').notNull(),
})

/**
 * A small number per agent that owns a block of FTS rowids: a reminder's `doc_id` is
 * `num * 2^32 + n`, so a search restricted to one agent is a rowid range FTS5 applies inside the
 * index, instead of a join that visits every other agent's (or every) match.
 */
export const reminderDocBlocks = sqliteTable('reminder_doc_blocks', {
  agentId: text('agent_id')
    .primaryKey()
    .references(() => agents.id, { onDelete: 'cascade' }),
  num: integer('num').notNull().unique(),
})
