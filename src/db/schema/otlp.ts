import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { agents } from './agents.js'

/**
 * What an agent's OTLP exports said (src/otlp), one row per goal, prompt, tool call or model
 * call's usage, unique per (agent, conversation, key): the key names the span, log event, tool
 * call or model response, so a retried or repeated export inserts nothing. `seq` is the order the
 * rows are applied in (within one export request, by start time). `state`: 0 waiting to be
 * applied to the conversation's session, 1 applied (`step_number`: the step it is, or was counted
 * on), 2 dropped (no session will take it). `payload` (the record's JSON) is cleared once applied.
 */
export const otlpRecords = sqliteTable(
  'otlp_records',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    conversation: text('conversation').notNull(),
    key: text('key').notNull(),
    kind: text('kind', { enum: ['goal', 'prompt', 'step', 'usage'] }).notNull(),
    payload: text('payload'),
    state: integer('state').notNull().default(0),
    stepNumber: integer('step_number'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('otlp_records_key_idx').on(t.agentId, t.conversation, t.key),
    index('otlp_records_waiting_idx')
      .on(t.agentId, t.conversation, t.seq)
      .where(sql`${t.state} = 0`),
  ],
)
