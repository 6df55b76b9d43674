import { index, integer, primaryKey, real, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/** Tenants: every other table that holds agent data carries `agent_id`. Times are epoch ms. */
export const agents = sqliteTable('agents', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: integer('created_at').notNull(),
})

/** API keys are stored as SHA-256 of the (high-entropy, random) key; the key itself is shown once. */
export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    keyHash: text('key_hash').notNull().unique(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('api_keys_agent_idx').on(t.agentId)],
)

/**
 * What every session of an agent spent on one day in the agent's timezone (`day`: YYYY-MM-DD),
 * against the daily budget of its settings. A step adds its spend with one upsert that returns the
 * new totals, so concurrent steps (other replicas too) each see the total their own step made.
 */
export const agentDailySpend = sqliteTable(
  'agent_daily_spend',
  {
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    day: text('day').notNull(),
    tokens: integer('tokens').notNull().default(0),
    costUsd: real('cost_usd').notNull().default(0),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.day] })],
)
