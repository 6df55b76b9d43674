import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { sessions } from './sessions.js'

/**
 * The engine state of a session (GoalSession JSON) as of `version`, 1:1 with `sessions`. It is
 * rewritten every few dozen operations, not on every one: the ops after it are in `session_ops`.
 */
export const sessionSnapshots = sqliteTable('session_snapshots', {
  sessionId: text('session_id')
    .primaryKey()
    .references(() => sessions.id, { onDelete: 'cascade' }),
  version: integer('version').notNull(),
  snapshot: text('snapshot').notNull(),
})

/**
 * The journal: each engine operation since the snapshot, keyed by the session version it
 * produced, with its input (`op`, JSON) and the clock reading it ran at (`at`, epoch ms), so
 * replaying it on the snapshot gives exactly the same engine state. Rows covered by a newer
 * snapshot are deleted. The migration creates it WITHOUT ROWID (one b-tree, not table + index).
 */
export const sessionOps = sqliteTable(
  'session_ops',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    at: integer('at').notNull(),
    op: text('op').notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.version] })],
)
