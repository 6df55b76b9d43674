/**
 * Prepared statements over `sessions`, `steps`, `drift_events` and the engine state tables
 * (`session_snapshots`, `session_ops`). Every statement on the first three is scoped by agent_id,
 * so another agent's session id simply finds nothing (and becomes a 404); the engine state is
 * only read for a session whose scoped meta row was found.
 */
import type Database from 'better-sqlite3'

export interface SessionMetaRow {
  id: string
  agent_id: string
  goal: string
  plan: string
  status: 'active' | 'archived'
  config: string
  metadata: string
  state: string
  version: number
  created_at: number
  updated_at: number
}

/** What a write needs of the row: which session, whether it is active, and its version. */
export type SessionKey = Pick<SessionMetaRow, 'id' | 'agent_id' | 'status' | 'version'>

/** A write of the meta row on top of `version` (it becomes `next_version`). */
export interface MetaWrite {
  id: string
  agent_id: string
  version: number
  next_version: number
  goal: string
  plan: string
  state: string
  updated_at: number
}

export interface OpRow {
  version: number
  at: number
  op: string
}

export interface StepRow {
  session_id: string
  step_number: number
  agent_id: string
  description: string
  output: string
  verification: string
  drift: string
  recommended_action: string
  created_at: number
  /** The session version the step produced (null on rows older than the column). */
  version: number | null
}

/** A step row read back as the journal entry of its step. */
export interface StepJournalRow {
  version: number
  at: number
  description: string
  output: string
  /** The drift similarity the step used; null for an `embeddings` step that fell back to `enhanced`. */
  similarity: number | null
}

export interface DriftEventRow {
  seq: number
  session_id: string
  agent_id: string
  step_number: number
  similarity: number
  action_text: string
  severity: string
  created_at: number
}

const META = 'id, agent_id, goal, plan, status, config, metadata, state, version, created_at, updated_at'

type Stmt<P extends unknown[], R = unknown> = Database.Statement<P, R>

/** Spelled out (not inferred) so declaration emit can name better-sqlite3's types: `npm run build` needs it. */
export interface SessionStatements {
  insert: Stmt<[SessionMetaRow]>
  meta: Stmt<[string, string], SessionMetaRow>
  key: Stmt<[string, string], SessionKey>
  writeMeta: Stmt<[MetaWrite]>
  writeState: Stmt<[Omit<MetaWrite, 'goal' | 'plan'>]>
  bumpVersion: Stmt<[{ id: string; version: number; updated_at: number }]>
  versionOf: Stmt<[string], { version: number }>
  snapshot: Stmt<[string], { version: number; snapshot: string }>
  putSnapshot: Stmt<[string, number, string]>
  ops: Stmt<[string, number], OpRow>
  appendOp: Stmt<[string, number, number, string]>
  dropOps: Stmt<[string, number]>
  writeAttrs: Stmt<[{ id: string; agent_id: string; status: string; metadata: string; updated_at: number }]>
  remove: Stmt<[string, string]>
  listAll: Stmt<[string, string, number], SessionMetaRow>
  listByStatus: Stmt<[string, string, string, number], SessionMetaRow>
  insertStep: Stmt<[StepRow]>
  journalSteps: Stmt<[string, number, number], StepJournalRow>
  listSteps: Stmt<[string, string, number, number], StepRow>
  insertDriftEvent: Stmt<[Omit<DriftEventRow, 'seq'>]>
  listDriftEvents: Stmt<[string, string, number, number], DriftEventRow>
}

function prepareAll(db: Database.Database): SessionStatements {
  return {
    insert: db.prepare<[SessionMetaRow]>(
      `INSERT INTO sessions (${META})
       VALUES (@id, @agent_id, @goal, @plan, @status, @config, @metadata, @state, @version, @created_at, @updated_at)`,
    ),
    meta: db.prepare<[string, string], SessionMetaRow>(`SELECT ${META} FROM sessions WHERE agent_id = ? AND id = ?`),
    key: db.prepare<[string, string], SessionKey>('SELECT id, agent_id, status, version FROM sessions WHERE agent_id = ? AND id = ?'),
    // Optimistic concurrency: the write lands only on the version it was computed from.
    writeMeta: db.prepare<[MetaWrite]>(
      `UPDATE sessions SET goal = @goal, plan = @plan, state = @state, version = @next_version, updated_at = @updated_at
       WHERE agent_id = @agent_id AND id = @id AND version = @version`,
    ),
    writeState: db.prepare<[Omit<MetaWrite, 'goal' | 'plan'>]>(
      `UPDATE sessions SET state = @state, version = @next_version, updated_at = @updated_at
       WHERE agent_id = @agent_id AND id = @id AND version = @version`,
    ),
    // Deferred reminders change no column but the version (and when the session last changed).
    bumpVersion: db.prepare<[{ id: string; version: number; updated_at: number }]>(
      'UPDATE sessions SET version = version + 1, updated_at = @updated_at WHERE id = @id AND version = @version',
    ),
    versionOf: db.prepare<[string], { version: number }>('SELECT version FROM sessions WHERE id = ?'),
    snapshot: db.prepare<[string], { version: number; snapshot: string }>(
      'SELECT version, snapshot FROM session_snapshots WHERE session_id = ?',
    ),
    // Never replaces a newer snapshot with an older one (an eviction racing another writer).
    putSnapshot: db.prepare<[string, number, string]>(
      `INSERT INTO session_snapshots (session_id, version, snapshot) VALUES (?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET version = excluded.version, snapshot = excluded.snapshot
       WHERE excluded.version > session_snapshots.version`,
    ),
    ops: db.prepare<[string, number], OpRow>('SELECT version, at, op FROM session_ops WHERE session_id = ? AND version > ? ORDER BY version'),
    appendOp: db.prepare<[string, number, number, string]>('INSERT INTO session_ops (session_id, version, at, op) VALUES (?, ?, ?, ?)'),
    dropOps: db.prepare<[string, number]>('DELETE FROM session_ops WHERE session_id = ? AND version <= ?'),
    writeAttrs: db.prepare<[{ id: string; agent_id: string; status: string; metadata: string; updated_at: number }]>(
      `UPDATE sessions SET status = @status, metadata = @metadata, version = version + 1, updated_at = @updated_at
       WHERE agent_id = @agent_id AND id = @id`,
    ),
    remove: db.prepare<[string, string]>('DELETE FROM sessions WHERE agent_id = ? AND id = ?'),
    listAll: db.prepare<[string, string, number], SessionMetaRow>(
      `SELECT ${META} FROM sessions WHERE agent_id = ? AND id > ? ORDER BY id LIMIT ?`,
    ),
    listByStatus: db.prepare<[string, string, string, number], SessionMetaRow>(
      `SELECT ${META} FROM sessions WHERE agent_id = ? AND status = ? AND id > ? ORDER BY id LIMIT ?`,
    ),
    insertStep: db.prepare<[StepRow]>(
      `INSERT INTO steps (session_id, step_number, agent_id, description, output, verification, drift, recommended_action, created_at, version)
       VALUES (@session_id, @step_number, @agent_id, @description, @output, @verification, @drift, @recommended_action, @created_at, @version)`,
    ),
    // Steps past a snapshot (its step count) on the primary key; older rows' ops are in session_ops.
    // A step replays with the score it recorded, except an embeddings fallback, scored by `enhanced` again.
    journalSteps: db.prepare<[string, number, number], StepJournalRow>(
      `SELECT version, created_at AS at, description, output,
              CASE WHEN drift ->> '$.similarity_mode' = 'enhanced' THEN NULL ELSE drift ->> '$.similarity' END AS similarity FROM steps
       WHERE session_id = ? AND step_number > ? AND version > ? ORDER BY step_number`,
    ),
    listSteps: db.prepare<[string, string, number, number], StepRow>(
      `SELECT * FROM steps WHERE session_id = ? AND agent_id = ? AND step_number > ? ORDER BY step_number LIMIT ?`,
    ),
    insertDriftEvent: db.prepare<[Omit<DriftEventRow, 'seq'>]>(
      `INSERT INTO drift_events (session_id, agent_id, step_number, similarity, action_text, severity, created_at)
       VALUES (@session_id, @agent_id, @step_number, @similarity, @action_text, @severity, @created_at)`,
    ),
    listDriftEvents: db.prepare<[string, string, number, number], DriftEventRow>(
      `SELECT * FROM drift_events WHERE session_id = ? AND agent_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    ),
  }
}

/** Statements are prepared on first use: the app may be built before migrations ran (/readyz). */
export class SessionStore {
  readonly sqlite: Database.Database
  #stmts: SessionStatements | undefined

  constructor(sqlite: Database.Database) {
    this.sqlite = sqlite
  }

  get q(): SessionStatements {
    this.#stmts ??= prepareAll(this.sqlite)
    return this.#stmts
  }

  list(agentId: string, status: string | undefined, limit: number, cursor = ''): SessionMetaRow[] {
    return status === undefined
      ? this.q.listAll.all(agentId, cursor, limit + 1)
      : this.q.listByStatus.all(agentId, status, cursor, limit + 1)
  }
}

/** Cursor of a list keyed by an integer (step number, event sequence): its decimal string. */
export function intCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0
  const n = Number(cursor)
  return Number.isSafeInteger(n) && n >= 0 ? n : Number.MAX_SAFE_INTEGER
}
