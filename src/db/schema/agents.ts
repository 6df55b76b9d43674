import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

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
