/**
 * Every SQL statement over `sessions`, `steps`, `drift_events` and `session_snapshots`, on either
 * dialect. Every statement on the first three is scoped by agent_id, so another agent's session id
 * simply finds nothing (and becomes a 404); a snapshot is only read for a session whose scoped row
 * was found. Row types come from the Drizzle schema (src/db/schema/sessions.ts); `steps.error` is
 * an integer on SQLite and a boolean on PostgreSQL (model.ts reads either).
 */
import type { InferInsertModel, InferSelectModel } from 'drizzle-orm'
import type { SqlDatabase } from '../db/database.js'
import type { driftEvents, sessions, steps } from '../db/schema/index.js'
import { byteBoundedList } from '../pagination.js'

type Db = { dbColumnNames: true }
export type SessionRow = InferSelectModel<typeof sessions, Db>
export type StepRow = InferSelectModel<typeof steps, Db>
export type DriftEventRow = InferSelectModel<typeof driftEvents, Db>
export type StepInsert = InferInsertModel<typeof steps, Db>
export type DriftEventInsert = InferInsertModel<typeof driftEvents, Db>

/** The list filters of `GET /v1/sessions` (and its overview). */
export interface SessionFilter {
  status?: string | undefined
  external_id?: string | undefined
  parent_id?: string | undefined
}

/** What a write needs of the row: which session, whether it is active, and its version. */
export type SessionKey = Pick<SessionRow, 'id' | 'agent_id' | 'status' | 'version'>

/** A step row read back to be replayed on its session's snapshot (store.ts). */
export interface JournalStep {
  at: number
  description: string
  output: string
  /** The drift similarity the step used; null for an `embeddings` step that fell back to `enhanced` (scored again). */
  similarity: number | null
  /** The optional fields the step was sent with (`tool` as JSON), null when absent. */
  tool: string | null
  error: number | boolean | null
  tokens: number | null
  cost_usd: number | null
}

/** A step as the sessions overview shows it (a sparkline point and the last verdict). */
export interface RecentStep {
  step_number: number
  recommended_action: string
  similarity: number
  created_at: number
}

/** The engine state written with a new version, on top of `version`; no snapshot for a journaled step. */
export type StateWrite = {
  id: string
  agent_id: string
  version: number
  goal: string
  plan: string
  state: string
  snapshot: string | undefined
  updated_at: number
}

export type AttrsWrite = {
  id: string
  agent_id: string
  status: string
  metadata: string
  updated_at: number
}

const META = 'id, agent_id, goal, plan, status, config, metadata, state, version, external_id, parent_id, created_at, updated_at'
const STEP = `session_id, step_number, agent_id, description, output, verification, drift, recommended_action, created_at, version,
  tool, error, tokens, cost_usd`
/** The columns that make a row large, which a list page bounds in bytes (pagination.ts). */
const SESSION_TEXT = ['goal', 'plan', 'config', 'metadata', 'state']
const STEP_TEXT = ['description', 'output', 'verification', 'drift', 'tool']

/** The statements whose text differs between the dialects (JSON access, row locks). */
const DIALECT = {
  sqlite: {
    similarity: "drift ->> '$.similarity'",
    mode: "drift ->> '$.similarity_mode'",
    // BEGIN IMMEDIATE already holds the database's write lock.
    lockKey: '',
    // Three statements in a transaction of their own: each is a few microseconds in process.
    stepWrite: undefined,
  },
  postgres: {
    similarity: "(drift::jsonb ->> 'similarity')::float8",
    mode: "drift::jsonb ->> 'similarity_mode'",
    // A writer on another connection or replica waits for this write instead of losing the version race.
    lockKey: ' FOR NO KEY UPDATE',
    // One round trip instead of three (and no BEGIN/COMMIT around them when nothing else commits
    // with the step): the inserts take their row from the update's, so they land only when it does.
    stepWrite: (drift: boolean) => `WITH u AS (
        UPDATE sessions SET goal = @goal, plan = @plan, state = @state, version = @version + 1, updated_at = @updated_at
        WHERE agent_id = @agent_id AND id = @id AND version = @version RETURNING id
      ), s AS (
        INSERT INTO steps (${STEP})
        SELECT u.id, @step_number::int, @agent_id, @description, @output, @verification, @drift, @recommended_action,
          @created_at::bigint, @version::int + 1, @tool, @error::boolean, @tokens::int, @cost_usd::float8 FROM u
      )${
        drift
          ? `, d AS (
        INSERT INTO drift_events (session_id, agent_id, step_number, similarity, action_text, severity, created_at)
        SELECT u.id, @agent_id, @d_step_number::int, @d_similarity::float8, @d_action_text, @d_severity, @d_created_at::bigint FROM u
      )`
          : ''
      }
      SELECT count(*)::int AS n FROM u`,
  },
} as const

const SQL = {
  insert: `INSERT INTO sessions (${META})
    VALUES (@id, @agent_id, @goal, @plan, @status, @config, @metadata, @state, @version, @external_id, @parent_id, @created_at, @updated_at)
    ON CONFLICT DO NOTHING`,
  meta: `SELECT ${META} FROM sessions WHERE agent_id = ? AND id = ?`,
  byExternalId: `SELECT ${META} FROM sessions WHERE agent_id = ? AND external_id = ?`,
  key: 'SELECT id, agent_id, status, version FROM sessions WHERE agent_id = ? AND id = ?',
  // One statement, so the version and its snapshot come from one view of the database on either dialect.
  stored: `SELECT s.version, s.external_id, p.snapshot FROM sessions s JOIN session_snapshots p ON p.session_id = s.id
    WHERE s.agent_id = ? AND s.id = ?`,
  // Optimistic concurrency: the write lands only on the version it was computed from (an archive bumps it too).
  write: `UPDATE sessions SET goal = @goal, plan = @plan, state = @state, version = @version + 1, updated_at = @updated_at
    WHERE agent_id = @agent_id AND id = @id AND version = @version`,
  putSnapshot: `INSERT INTO session_snapshots (session_id, version, snapshot) VALUES (?, ?, ?)
    ON CONFLICT (session_id) DO UPDATE SET version = excluded.version, snapshot = excluded.snapshot`,
  writeAttrs: `UPDATE sessions SET status = @status, metadata = @metadata, version = version + 1, updated_at = @updated_at
    WHERE agent_id = @agent_id AND id = @id`,
  remove: 'DELETE FROM sessions WHERE agent_id = ? AND id = ?',
  insertStep: `INSERT INTO steps (${STEP})
    VALUES (@session_id, @step_number, @agent_id, @description, @output, @verification, @drift, @recommended_action, @created_at, @version,
      @tool, @error, @tokens, @cost_usd)`,
  listSteps: byteBoundedList(STEP, 'FROM steps WHERE session_id = ? AND agent_id = ? AND step_number > ?', 'step_number', STEP_TEXT),
  insertDriftEvent: `INSERT INTO drift_events (session_id, agent_id, step_number, similarity, action_text, severity, created_at)
    VALUES (@session_id, @agent_id, @step_number, @similarity, @action_text, @severity, @created_at)`,
  listDriftEvents: 'SELECT * FROM drift_events WHERE session_id = ? AND agent_id = ? AND seq > ? ORDER BY seq LIMIT ?',
}

export class SessionRepository {
  private readonly db: SqlDatabase
  private readonly lockKeySql: string
  private readonly recentStepsSql: string
  private readonly journalStepsSql: string
  /** PostgreSQL's one-statement step write, without and with a drift event. */
  private readonly stepWriteSql: readonly [string, string] | undefined

  constructor(db: SqlDatabase) {
    this.db = db
    const d = DIALECT[db.dialect]
    this.lockKeySql = SQL.key + d.lockKey
    this.stepWriteSql = d.stepWrite && [d.stepWrite(false), d.stepWrite(true)]
    this.recentStepsSql = `SELECT step_number, recommended_action, ${d.similarity} AS similarity, created_at
      FROM steps WHERE session_id = ? AND agent_id = ? ORDER BY step_number DESC LIMIT ?`
    // Bounded by the version read with the snapshot: a step committed since belongs to a later version.
    this.journalStepsSql = `SELECT created_at AS at, description, output,
        CASE WHEN ${d.mode} = 'enhanced' THEN NULL ELSE ${d.similarity} END AS similarity,
        tool, error, tokens, cost_usd
      FROM steps WHERE session_id = ? AND step_number > ? AND (version IS NULL OR version <= ?) ORDER BY step_number`
  }

  /**
   * A new session's row and its first snapshot (the caller holds the transaction); false, with
   * nothing written, when the agent has a session with its external_id already.
   */
  async insert(row: SessionRow, snapshot: string): Promise<boolean> {
    if ((await this.db.run(SQL.insert, row)) === 0) return false
    await this.db.run(SQL.putSnapshot, [row.id, row.version, snapshot])
    return true
  }

  meta(agentId: string, id: string): Promise<SessionRow | undefined> {
    return this.db.get(SQL.meta, [agentId, id])
  }

  key(agentId: string, id: string): Promise<SessionKey | undefined> {
    return this.db.get(SQL.key, [agentId, id])
  }

  /** The key of a session about to be written, its row locked until the transaction ends (PostgreSQL). */
  lockKey(agentId: string, id: string): Promise<SessionKey | undefined> {
    return this.db.get(this.lockKeySql, [agentId, id])
  }

  /** The session's version, its external id and the latest snapshot (written at or before that version). */
  stored(agentId: string, id: string): Promise<{ version: number; external_id: string | null; snapshot: string } | undefined> {
    return this.db.get(SQL.stored, [agentId, id])
  }

  /** Writes the engine state as version + 1; false when the row is no longer at `version` (another writer won). */
  async writeState(w: StateWrite): Promise<boolean> {
    const { snapshot, ...row } = w
    if ((await this.db.run(SQL.write, row)) !== 1) return false
    if (snapshot !== undefined) await this.db.run(SQL.putSnapshot, [w.id, w.version + 1, snapshot])
    return true
  }

  /**
   * A journaled step (the state without a snapshot, the step's row, its drift event if any),
   * atomic on its own: a transaction of its own on SQLite (a savepoint inside the caller's), one
   * statement on PostgreSQL. False, with nothing written, when the row is no longer at `version`.
   */
  async writeStep(w: StateWrite, step: StepInsert, drift: DriftEventInsert | undefined): Promise<boolean> {
    if (this.stepWriteSql === undefined) {
      return this.db.transaction(async () => {
        if (!(await this.writeState(w))) return false
        await this.insertStep(step)
        if (drift !== undefined) await this.insertDriftEvent(drift)
        return true
      })
    }
    const { snapshot: _, ...state } = w
    const { session_id: _s, agent_id: _a, version: _v, ...row } = step
    const params = {
      ...state,
      ...row,
      ...(drift && { d_step_number: drift.step_number, d_similarity: drift.similarity, d_action_text: drift.action_text, d_severity: drift.severity, d_created_at: drift.created_at }),
    }
    const written = await this.db.get<{ n: number }>(this.stepWriteSql[drift === undefined ? 0 : 1], params)
    return written?.n === 1
  }

  /** Status and metadata only: the engine state (and its snapshot) stays as it is. */
  async writeAttrs(row: AttrsWrite): Promise<boolean> {
    return (await this.db.run(SQL.writeAttrs, row)) === 1
  }

  async remove(agentId: string, id: string): Promise<boolean> {
    return (await this.db.run(SQL.remove, [agentId, id])) > 0
  }

  /** The agent's session with this external id (unique per agent). */
  byExternalId(agentId: string, externalId: string): Promise<SessionRow | undefined> {
    return this.db.get(SQL.byExternalId, [agentId, externalId])
  }

  /**
   * One page plus one row, to know whether more follow: in id (= creation) order, or newest first
   * (the dashboard's list; its cursor is the last, oldest, id of the previous page, and 'ses_~'
   * sorts after every id in byte order, the C collation on PostgreSQL, so no cursor means the top).
   */
  list(agentId: string, filter: SessionFilter, limit: number, cursor: string | undefined, newestFirst = false): Promise<SessionRow[]> {
    const where = ['agent_id = ?']
    const params: unknown[] = [agentId]
    for (const key of ['status', 'external_id', 'parent_id'] as const) {
      if (filter[key] === undefined) continue
      where.push(`${key} = ?`)
      params.push(filter[key])
    }
    where.push(newestFirst ? 'id < ?' : 'id > ?')
    params.push(cursor ?? (newestFirst ? 'ses_~' : ''), limit + 1)
    return this.db.all(byteBoundedList(META, `FROM sessions WHERE ${where.join(' AND ')}`, newestFirst ? 'id DESC' : 'id', SESSION_TEXT), params)
  }

  /** The session's last `count` steps, newest first (step numbers run 1..n, so the first is the step count). */
  recentSteps(agentId: string, id: string, count: number): Promise<RecentStep[]> {
    return this.db.all(this.recentStepsSql, [id, agentId, count])
  }

  async insertStep(row: StepInsert): Promise<void> {
    await this.db.run(SQL.insertStep, row)
  }

  steps(agentId: string, id: string, after: number, limit: number): Promise<StepRow[]> {
    return this.db.all(SQL.listSteps, [id, agentId, after, limit + 1])
  }

  /** The session's steps numbered past `stepCount` (its snapshot's) up to `version`, oldest first. */
  journalSteps(id: string, stepCount: number, version: number): Promise<JournalStep[]> {
    return this.db.all(this.journalStepsSql, [id, stepCount, version])
  }

  async insertDriftEvent(row: DriftEventInsert): Promise<void> {
    await this.db.run(SQL.insertDriftEvent, row)
  }

  driftEvents(agentId: string, id: string, after: number, limit: number): Promise<DriftEventRow[]> {
    return this.db.all(SQL.listDriftEvents, [id, agentId, after, limit + 1])
  }
}
