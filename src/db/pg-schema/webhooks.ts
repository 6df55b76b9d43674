import { sql } from 'drizzle-orm'
import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { agents } from './agents.js'
import { id, ms } from './columns.js'

/** Webhook subscriptions, the outbox, deliveries and attempts; comments on the SQLite twin (src/db/schema/webhooks.ts). */
export const webhooks = pgTable(
  'webhooks',
  {
    id: id('id').primaryKey(),
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
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: ms('previous_secret_expires_at'),
    failingSince: ms('failing_since'),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [index('webhooks_agent_idx').on(t.agentId, t.id)],
)

export const webhookMessages = pgTable(
  'webhook_messages',
  {
    id: id('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    payload: text('payload').notNull(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [index('webhook_messages_agent_idx').on(t.agentId)],
)

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: id('id').primaryKey(),
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
    nextAttemptAt: ms('next_attempt_at'),
    claimedAt: ms('claimed_at'),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_message_webhook_uq').on(t.messageId, t.webhookId),
    index('webhook_deliveries_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`state = 'pending'`),
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.state),
  ],
)

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: id('id').primaryKey(),
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
    createdAt: ms('created_at').notNull(),
    nextAttemptAt: ms('next_attempt_at'),
  },
  (t) => [index('webhook_attempts_webhook_idx').on(t.webhookId, t.id)],
)
