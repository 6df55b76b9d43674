import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { agents } from './agents.js'

/**
 * Stored first responses of create calls sent with an `Idempotency-Key` (kept 24 h).
 * `scope` is the agent id, or `admin` for admin calls; agent-scoped rows go with their agent.
 */
export const idempotencyKeys = sqliteTable(
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
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] }), index('idempotency_keys_created_idx').on(t.createdAt)],
)
