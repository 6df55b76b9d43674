import { bigserial, boolean, doublePrecision, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { agents } from './agents.js'
import { id, ms } from './columns.js'

/** Goal sessions; `version` is the optimistic-concurrency counter every write checks. */
export const sessions = pgTable(
  'sessions',
  {
    id: id('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    goal: text('goal').notNull(),
    plan: text('plan').notNull(),
    status: text('status', { enum: ['active', 'archived'] })
      .notNull()
      .default('active'),
    config: text('config').notNull(),
    metadata: text('metadata').notNull().default('{}'),
    state: text('state').notNull(),
    version: integer('version').notNull().default(1),
    /** The caller's own id for the session (a coding agent's session id), unique per agent; null when not given. */
    externalId: text('external_id'),
    parentId: text('parent_id'),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [
    index('sessions_agent_status_idx').on(t.agentId, t.status, t.id),
    index('sessions_agent_id_idx').on(t.agentId, t.id),
    uniqueIndex('sessions_agent_external_idx').on(t.agentId, t.externalId),
    index('sessions_agent_parent_idx').on(t.agentId, t.parentId),
  ],
)

/** The step log; a row is also the step's journal entry (replayed past the snapshot). */
export const steps = pgTable(
  'steps',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    stepNumber: integer('step_number').notNull(),
    agentId: text('agent_id').notNull(),
    description: text('description').notNull(),
    output: text('output').notNull().default(''),
    verification: text('verification').notNull(),
    drift: text('drift').notNull(),
    recommendedAction: text('recommended_action').notNull(),
    createdAt: ms('created_at').notNull(),
    version: integer('version').notNull(),
    /** The step's optional fields, replayed with it: `{ name, args }` JSON, the error flag, its spend. */
    tool: text('tool'),
    error: boolean('error'),
    tokens: integer('tokens'),
    costUsd: doublePrecision('cost_usd'),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.stepNumber] })],
)

export const driftEvents = pgTable(
  'drift_events',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    agentId: text('agent_id').notNull(),
    stepNumber: integer('step_number').notNull(),
    similarity: doublePrecision('similarity').notNull(),
    actionText: text('action_text').notNull(),
    severity: text('severity', { enum: ['none', 'low', 'moderate', 'high', 'critical'] }).notNull(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [index('drift_events_session_idx').on(t.sessionId, t.seq)],
)

/** The engine state as of `version`; the steps after it are replayed from `steps`. */
export const sessionSnapshots = pgTable('session_snapshots', {
  sessionId: text('session_id')
    .primaryKey()
    .references(() => sessions.id, { onDelete: 'cascade' }),
  version: integer('version').notNull(),
  snapshot: text('snapshot').notNull(),
})
