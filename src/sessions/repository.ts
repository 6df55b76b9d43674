/**
 * Every SQL statement over `sessions`, `steps`, `drift_events` and `session_snapshots`. Every
 * statement on the first three is scoped by agent_id, so another agent's session id simply finds
 * nothing (and becomes a 404); a snapshot is only read for a session whose scoped row was found.
 * Row types come from the Drizzle schema (src/db/schema/sessions.ts).
 */
import type Database from 'better-sqlite3'
import type { InferInsertModel, InferSelectModel } from 'drizzle-orm'
import { preparer, type Stmt } from '../db/lazy-statement.js'
import type { driftEvents, sessions, steps } from '../db/schema/index.js'

type Db = { dbColumnNames: true }
export type SessionRow = InferSelectModel<typeof sessions, Db>
export type StepRow = InferSelectModel<typeof steps, Db>
export type DriftEventRow = InferSelectModel<typeof driftEvents, Db>

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
  error: number | null
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
export interface StateWrite {
  id: string
  agent_id: string
  version: number
  goal: string
  plan: string
  state: string
  snapshot: string | undefined
  updated_at: number
}

const META = 'id, agent_id, goal, plan, status, config, metadata, state, version, created_at, updated_at'

export class SessionRepository {
  private readonly insertRow: Stmt<[SessionRow]>
  private readonly metaRow: Stmt<[string, string], SessionRow>
  private readonly keyRow: Stmt<[string, string], SessionKey>
  private readonly writeRow: Stmt<[Omit<StateWrite, 'snapshot'>]>
  private readonly snapshotRow: Stmt<[string], { version: number; snapshot: string }>
  private readonly putSnapshot: Stmt<[string, number, string]>
  private readonly writeAttrsRow: Stmt<[{ id: string; agent_id: string; status: string; metadata: string; updated_at: number }]>
  private readonly removeRow: Stmt<[string, string]>
  private readonly listAll: Stmt<[string, string, number], SessionRow>
  private readonly listByStatus: Stmt<[string, string, string, number], SessionRow>
  private readonly listNewest: Stmt<[string, string, number], SessionRow>
  private readonly listNewestByStatus: Stmt<[string, string, string, number], SessionRow>
  private readonly recentStepRows: Stmt<[string, string, number], RecentStep>
  private readonly insertStepRow: Stmt<[InferInsertModel<typeof steps, Db>]>
  private readonly listStepRows: Stmt<[string, string, number, number], StepRow>
  private readonly journalStepRows: Stmt<[string, number], JournalStep>
  private readonly insertDriftEventRow: Stmt<[InferInsertModel<typeof driftEvents, Db>]>
  private readonly listDriftEventRows: Stmt<[string, string, number, number], DriftEventRow>

  constructor(sqlite: Database.Database) {
    const prepare = preparer(sqlite)
    this.insertRow = prepare(`INSERT INTO sessions (${META})
      VALUES (@id, @agent_id, @goal, @plan, @status, @config, @metadata, @state, @version, @created_at, @updated_at)`)
    this.metaRow = prepare(`SELECT ${META} FROM sessions WHERE agent_id = ? AND id = ?`)
    this.keyRow = prepare('SELECT id, agent_id, status, version FROM sessions WHERE agent_id = ? AND id = ?')
    // Optimistic concurrency: the write lands only on the version it was computed from.
    this.writeRow = prepare(`UPDATE sessions SET goal = @goal, plan = @plan, state = @state, version = @version + 1, updated_at = @updated_at
      WHERE agent_id = @agent_id AND id = @id AND version = @version`)
    this.snapshotRow = prepare('SELECT version, snapshot FROM session_snapshots WHERE session_id = ?')
    this.putSnapshot = prepare(`INSERT INTO session_snapshots (session_id, version, snapshot) VALUES (?, ?, ?)
      ON CONFLICT (session_id) DO UPDATE SET version = excluded.version, snapshot = excluded.snapshot`)
    this.writeAttrsRow = prepare(`UPDATE sessions SET status = @status, metadata = @metadata, version = version + 1, updated_at = @updated_at
      WHERE agent_id = @agent_id AND id = @id`)
    this.removeRow = prepare('DELETE FROM sessions WHERE agent_id = ? AND id = ?')
    this.listAll = prepare(`SELECT ${META} FROM sessions WHERE agent_id = ? AND id > ? ORDER BY id LIMIT ?`)
    this.listByStatus = prepare(`SELECT ${META} FROM sessions WHERE agent_id = ? AND status = ? AND id > ? ORDER BY id LIMIT ?`)
    // Newest first (the dashboard's list): 'ses_~' sorts after every id, so no cursor means from the top.
    this.listNewest = prepare(`SELECT ${META} FROM sessions WHERE agent_id = ? AND id < ? ORDER BY id DESC LIMIT ?`)
    this.listNewestByStatus = prepare(`SELECT ${META} FROM sessions WHERE agent_id = ? AND status = ? AND id < ? ORDER BY id DESC LIMIT ?`)
    this.recentStepRows = prepare(`SELECT step_number, recommended_action, drift ->> '$.similarity' AS similarity, created_at
      FROM steps WHERE session_id = ? AND agent_id = ? ORDER BY step_number DESC LIMIT ?`)
    this.insertStepRow = prepare(`INSERT INTO steps (session_id, step_number, agent_id, description, output, verification, drift, recommended_action, created_at, version,
        tool, error, tokens, cost_usd)
      VALUES (@session_id, @step_number, @agent_id, @description, @output, @verification, @drift, @recommended_action, @created_at, @version,
        @tool, @error, @tokens, @cost_usd)`)
    this.listStepRows = prepare('SELECT * FROM steps WHERE session_id = ? AND agent_id = ? AND step_number > ? ORDER BY step_number LIMIT ?')
    this.journalStepRows = prepare(`SELECT created_at AS at, description, output,
        CASE WHEN drift ->> '$.similarity_mode' = 'enhanced' THEN NULL ELSE drift ->> '$.similarity' END AS similarity,
        tool, error, tokens, cost_usd
      FROM steps WHERE session_id = ? AND step_number > ? ORDER BY step_number`)
    this.insertDriftEventRow = prepare(`INSERT INTO drift_events (session_id, agent_id, step_number, similarity, action_text, severity, created_at)
      VALUES (@session_id, @agent_id, @step_number, @similarity, @action_text, @severity, @created_at)`)
    this.listDriftEventRows = prepare('SELECT * FROM drift_events WHERE session_id = ? AND agent_id = ? AND seq > ? ORDER BY seq LIMIT ?')
  }

  /** A new session's row and its first snapshot (the caller holds the transaction). */
  insert(row: SessionRow, snapshot: string): void {
    this.insertRow.run(row)
    this.putSnapshot.run(row.id, row.version, snapshot)
  }

  meta(agentId: string, id: string): SessionRow | undefined {
    return this.metaRow.get(agentId, id)
  }

  key(agentId: string, id: string): SessionKey | undefined {
    return this.keyRow.get(agentId, id)
  }

  snapshot(id: string): { version: number; snapshot: string } | undefined {
    return this.snapshotRow.get(id)
  }

  /** Writes the engine state as version + 1; false when the row is no longer at `version` (another writer won). */
  writeState(w: StateWrite): boolean {
    const { snapshot, ...row } = w
    if (this.writeRow.run(row).changes !== 1) return false
    if (snapshot !== undefined) this.putSnapshot.run(w.id, w.version + 1, snapshot)
    return true
  }

  /** Status and metadata only: the engine state (and its snapshot) stays as it is. */
  writeAttrs(row: { id: string; agent_id: string; status: string; metadata: string; updated_at: number }): boolean {
    return this.writeAttrsRow.run(row).changes === 1
  }

  remove(agentId: string, id: string): boolean {
    return this.removeRow.run(agentId, id).changes > 0
  }

  /** One page in id (= creation) order plus one row, to know whether more follow. */
  list(agentId: string, status: string | undefined, limit: number, cursor = ''): SessionRow[] {
    return status === undefined ? this.listAll.all(agentId, cursor, limit + 1) : this.listByStatus.all(agentId, status, cursor, limit + 1)
  }

  /** Like `list`, newest first: the cursor is the last (oldest) id of the previous page. */
  listNewestFirst(agentId: string, status: string | undefined, limit: number, cursor = 'ses_~'): SessionRow[] {
    return status === undefined ? this.listNewest.all(agentId, cursor, limit + 1) : this.listNewestByStatus.all(agentId, status, cursor, limit + 1)
  }

  /** The session's last `count` steps, newest first (step numbers run 1..n, so the first is the step count). */
  recentSteps(agentId: string, id: string, count: number): RecentStep[] {
    return this.recentStepRows.all(id, agentId, count)
  }

  insertStep(row: InferInsertModel<typeof steps, Db>): void {
    this.insertStepRow.run(row)
  }

  steps(agentId: string, id: string, after: number, limit: number): StepRow[] {
    return this.listStepRows.all(id, agentId, after, limit + 1)
  }

  /** The session's steps numbered past `stepCount` (its snapshot's), oldest first. */
  journalSteps(id: string, stepCount: number): JournalStep[] {
    return this.journalStepRows.all(id, stepCount)
  }

  insertDriftEvent(row: InferInsertModel<typeof driftEvents, Db>): void {
    this.insertDriftEventRow.run(row)
  }

  driftEvents(agentId: string, id: string, after: number, limit: number): DriftEventRow[] {
    return this.listDriftEventRows.all(id, agentId, after, limit + 1)
  }
}
