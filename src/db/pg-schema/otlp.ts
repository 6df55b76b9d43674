import { sql } from 'drizzle-orm'
import { bigserial, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { agents } from './agents.js'
import { ms } from './columns.js'

/** What an agent's OTLP exports said, one row per record, unique per (agent, conversation, key): see the SQLite twin. */
export const otlpRecords = pgTable(
  'otlp_records',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    conversation: text('conversation').notNull(),
    key: text('key').notNull(),
    kind: text('kind', { enum: ['goal', 'prompt', 'step', 'usage'] }).notNull(),
    payload: text('payload'),
    state: integer('state').notNull().default(0),
    stepNumber: integer('step_number'),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('otlp_records_key_idx').on(t.agentId, t.conversation, t.key),
    index('otlp_records_waiting_idx')
      .on(t.agentId, t.conversation, t.seq)
      .where(sql`${t.state} = 0`),
  ],
)
