import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { agents } from './agents.js'

/** Webhook subscriptions. Times are epoch ms; `event_types` is a JSON array (empty = every event). */
export const webhooks = sqliteTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    eventTypes: text('event_types').notNull().default('[]'),
    description: text('description'),
    status: text('status', { enum: ['active', 'disabled'] })
      .notNull()
      .default('active'),
    disabledReason: text('disabled_reason'),
    secret: text('secret').notNull(),
    // Rotation: the old secret keeps signing alongside the new one until it expires.
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: integer('previous_secret_expires_at'),
    // Start of the current run of failed attempts; cleared by any success.
    failingSince: integer('failing_since'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('webhooks_agent_idx').on(t.agentId, t.id)],
)

/** The outbox: one row per event, `payload` stored byte-for-byte as it is sent and signed. */
export const webhookMessages = sqliteTable(
  'webhook_messages',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    payload: text('payload').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('webhook_messages_agent_idx').on(t.agentId)],
)

/**
 * One row per (message, webhook). `state` is pending until it succeeds, is exhausted (failed) or
 * its endpoint is disabled (paused, resumed on re-enable). While pending, `next_attempt_at` is
 * when the dispatcher may take it; a claim pushes it forward by a lease and sets `claimed_at`, so
 * a crash between claim and delivery only delays the delivery.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id').notNull(),
    messageId: text('message_id')
      .notNull()
      .references(() => webhookMessages.id, { onDelete: 'cascade' }),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    state: text('state', { enum: ['pending', 'succeeded', 'failed', 'paused'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: integer('next_attempt_at'),
    claimedAt: integer('claimed_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_message_webhook_uq').on(t.messageId, t.webhookId),
    // The dispatcher's range scan: only pending rows are indexed.
    index('webhook_deliveries_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`state = 'pending'`),
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.state),
  ],
)

/** Every attempt, successful or not, as `GET /v1/webhooks/{id}/deliveries` shows it. */
export const webhookAttempts = sqliteTable(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id').notNull(),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    messageId: text('message_id')
      .notNull()
      .references(() => webhookMessages.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    attempt: integer('attempt').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    createdAt: integer('created_at').notNull(),
    nextAttemptAt: integer('next_attempt_at'),
  },
  (t) => [index('webhook_attempts_webhook_idx').on(t.webhookId, t.id)],
)
