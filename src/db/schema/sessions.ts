import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { agents } from './agents.js'

/**
 * Goal sessions. Times are epoch ms. `version` is the optimistic-concurrency counter every write
 * checks (`UPDATE … WHERE version = ?`). The engine state lives in `session_snapshots` plus the
 * steps after it, so this row stays small and every write cheap; `state` (GoalState JSON) is
 * kept here so lists and reads never touch the engine state.
 */
export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    goal: text('goal').notNull(),
    /** JSON array of strings. */
    plan: text('plan').notNull(),
    status: text('status', { enum: ['active', 'archived'] })
      .notNull()
      .default('active'),
    /** Resolved SessionConfig JSON. */
    config: text('config').notNull(),
    /** JSON object. */
    metadata: text('metadata').notNull().default('{}'),
    state: text('state').notNull(),
    version: integer('version').notNull().default(1),
    /** The caller's own id for the session (a coding agent's session id), unique per agent; null when not given. */
    externalId: text('external_id'),
    /** The session of the same agent this one works for (a sub-agent's session names its parent's), checked when created; null when none. */
    parentId: text('parent_id'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('sessions_agent_status_idx').on(t.agentId, t.status, t.id),
    index('sessions_agent_id_idx').on(t.agentId, t.id),
    uniqueIndex('sessions_agent_external_idx').on(t.agentId, t.externalId),
    index('sessions_agent_parent_idx').on(t.agentId, t.parentId),
  ],
)

/** The step log, appended: one row per `POST …/steps`. */
export const steps = sqliteTable(
  'steps',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    stepNumber: integer('step_number').notNull(),
    agentId: text('agent_id').notNull(),
    description: text('description').notNull(),
    output: text('output').notNull().default(''),
    /** StepVerification JSON. */
    verification: text('verification').notNull(),
    /** DriftCheck JSON. */
    drift: text('drift').notNull(),
    recommendedAction: text('recommended_action').notNull(),
    createdAt: integer('created_at').notNull(),
    /**
     * The session version this step produced. The row is also the step's journal entry: a session
     * replays the steps numbered past its snapshot's step count.
     */
    version: integer('version').notNull(),
    /** The step's optional fields, replayed with it: `{ name, args }` JSON, the error flag (0/1), its spend. Null when not sent. */
    tool: text('tool'),
    error: integer('error'),
    tokens: integer('tokens'),
    costUsd: real('cost_usd'),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.stepNumber] })],
)

/** Drift events of steps and drift checks, appended; `seq` orders them and pages the list. */
export const driftEvents = sqliteTable(
  'drift_events',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    agentId: text('agent_id').notNull(),
    stepNumber: integer('step_number').notNull(),
    similarity: real('similarity').notNull(),
    actionText: text('action_text').notNull(),
    severity: text('severity', { enum: ['none', 'low', 'moderate', 'high', 'critical'] }).notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('drift_events_session_idx').on(t.sessionId, t.seq)],
)

/**
 * The engine state of a session (GoalSession JSON) as of `version`, 1:1 with `sessions`. A step
 * writes none until a few dozen have piled up (the steps after it are replayed from `steps`).
 */
export const sessionSnapshots = sqliteTable('session_snapshots', {
  sessionId: text('session_id')
    .primaryKey()
    .references(() => sessions.id, { onDelete: 'cascade' }),
  version: integer('version').notNull(),
  snapshot: text('snapshot').notNull(),
})
