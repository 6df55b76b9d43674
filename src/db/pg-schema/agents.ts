import { bigint, doublePrecision, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'
import { id, ms } from './columns.js'

/** Tenants; see src/db/schema/agents.ts (the SQLite twin of every table here holds the comments). */
export const agents = pgTable('agents', {
  id: id('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: ms('created_at').notNull(),
})

export const apiKeys = pgTable(
  'api_keys',
  {
    id: id('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    keyHash: text('key_hash').notNull().unique(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [index('api_keys_agent_idx').on(t.agentId)],
)

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    agentId: text('agent_id').references(() => agents.id, { onDelete: 'cascade' }),
    method: text('method').notNull(),
    path: text('path').notNull(),
    bodyHash: text('body_hash').notNull(),
    status: integer('status').notNull(),
    responseBody: text('response_body').notNull(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] }), index('idempotency_keys_created_idx').on(t.createdAt)],
)

/**
 * PostgreSQL only: request counts per caller and window, shared by every replica so the rate
 * limit is global (src/http/plugins/rate-limit-store.ts). One SQLite process counts in memory.
 */
export const rateLimits = pgTable(
  'rate_limits',
  {
    key: text('key').primaryKey(),
    count: integer('count').notNull(),
    windowEnds: ms('window_ends').notNull(),
  },
  (t) => [index('rate_limits_window_ends_idx').on(t.windowEnds)],
)

export const agentDailySpend = pgTable(
  'agent_daily_spend',
  {
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    day: text('day').notNull(),
    tokens: bigint('tokens', { mode: 'number' }).notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.day] })],
)
