/**
 * Prepared statements over `reminders`. Every statement is scoped by agent_id except the
 * scheduler's cross-agent scan, so another agent's id simply finds nothing.
 */
import type Database from 'better-sqlite3'
import { lazyPrepare } from '../db/lazy-statement.js'
import { ROW_COLUMNS, rowFromArray, rowSelect, type ReminderPriority, type ReminderRow, type ReminderStatus, type TriggerType } from './model.js'

export interface ListFilter {
  status?: ReminderStatus
  priority?: ReminderPriority
  trigger_type?: TriggerType
  tag?: string
  /** 1–200, default 50. */
  limit?: number
  /** The last id of the previous page. */
  cursor?: string
  /** Only reminders due at this instant (epoch ms): `/due` pages with the same id cursor. */
  due_at?: number
}

type Writable = Omit<ReminderRow, 'doc_id'>

const COLUMNS = ROW_COLUMNS.filter((c): c is Exclude<typeof c, 'doc_id'> => c !== 'doc_id')

const MUTABLE = COLUMNS.filter((c) => c !== 'id' && c !== 'agent_id' && c !== 'created_at')

/** Rowids per agent block: 2^32 reminders per agent, 2^21 agents within exact doubles. */
export const DOC_BLOCK = 4294967296

export class ReminderStore {
  private readonly blockStmt: Database.Statement<[string], { num: number }>
  private readonly newBlockStmt: Database.Statement<[string]>
  private readonly insertStmt: Database.Statement
  private readonly getStmt: Database.Statement<[string, string], ReminderRow>
  private readonly updateStmt: Database.Statement
  private readonly deleteStmt: Database.Statement<[string, string]>
  private readonly countLiveStmt: Database.Statement<[string], { n: number }>
  private readonly dueStmt: Database.Statement<[string, number, number], unknown[]>
  private readonly sessionStmt: Database.Statement<[string, string], { one: number }>
  private readonly listCache = new Map<string, Database.Statement>()

  readonly sqlite: Database.Database

  constructor(sqlite: Database.Database) {
    this.sqlite = sqlite
    this.blockStmt = lazyPrepare(sqlite, 'SELECT num FROM reminder_doc_blocks WHERE agent_id = ?')
    this.newBlockStmt = lazyPrepare(sqlite, `INSERT OR IGNORE INTO reminder_doc_blocks (agent_id, num)
      VALUES (?, (SELECT ifnull(max(num), 0) + 1 FROM reminder_doc_blocks))`)
    // doc_id: the next key in the agent's block; max() is one step down the unique doc_id index.
    this.insertStmt = lazyPrepare(sqlite, 
      `INSERT INTO reminders (doc_id, ${COLUMNS.join(', ')})
       VALUES (ifnull((SELECT max(doc_id) FROM reminders WHERE doc_id >= @lo AND doc_id < @hi), @lo) + 1,
         ${COLUMNS.map((c) => `@${c}`).join(', ')})`,
    )
    this.getStmt = lazyPrepare(sqlite, 'SELECT * FROM reminders WHERE agent_id = ? AND id = ?')
    this.updateStmt = lazyPrepare(sqlite, 
      `UPDATE reminders SET ${MUTABLE.map((c) => `${c} = @${c}`).join(', ')} WHERE agent_id = @agent_id AND id = @id`,
    )
    this.deleteStmt = lazyPrepare(sqlite, 'DELETE FROM reminders WHERE agent_id = ? AND id = ?')
    this.countLiveStmt = lazyPrepare(sqlite, 
      "SELECT count(*) AS n FROM reminders WHERE agent_id = ? AND status IN ('pending', 'triggered', 'snoozed')",
    )
    this.dueStmt = lazyPrepare(sqlite, 
      `SELECT ${rowSelect('reminders')} FROM reminders WHERE agent_id = ? AND next_fire_at IS NOT NULL AND next_fire_at <= ?
       ORDER BY next_fire_at, id LIMIT ?`,
    )
    this.sessionStmt = lazyPrepare(sqlite, 'SELECT 1 AS one FROM sessions WHERE agent_id = ? AND id = ?')
  }

  /** The agent's FTS rowid range [lo, hi), or null before its first reminder. */
  docRange(agentId: string): { lo: number; hi: number } | null {
    const b = this.blockStmt.get(agentId)
    return b ? { lo: b.num * DOC_BLOCK, hi: (b.num + 1) * DOC_BLOCK } : null
  }

  /** Inserts a row (the caller holds the transaction). */
  insert(row: Writable): void {
    this.newBlockStmt.run(row.agent_id)
    const range = this.docRange(row.agent_id)
    this.insertStmt.run({ ...row, lo: range?.lo, hi: range?.hi })
  }

  get(agentId: string, id: string): ReminderRow | undefined {
    return this.getStmt.get(agentId, id)
  }

  update(row: Writable): void {
    this.updateStmt.run(row)
  }

  delete(agentId: string, id: string): boolean {
    return this.deleteStmt.run(agentId, id).changes > 0
  }

  countLive(agentId: string): number {
    return this.countLiveStmt.get(agentId)?.n ?? 0
  }

  /** True when the session exists and is this agent's (a reminder may only link to its own). */
  hasSession(agentId: string, sessionId: string): boolean {
    return this.sessionStmt.get(agentId, sessionId) !== undefined
  }

  /** Live reminders whose next fire time is at or before `asOfMs`, soonest first. */
  due(agentId: string, asOfMs: number, limit = 200): ReminderRow[] {
    return this.dueStmt.raw(true).all(agentId, asOfMs, limit).map(rowFromArray)
  }

  /** One page in id (= creation) order; fetches one extra row to know whether more follow. */
  list(agentId: string, filter: ListFilter): { rows: ReminderRow[]; next_cursor: string | null } {
    const where = ['agent_id = @agent_id']
    if (filter.status) where.push('status = @status')
    if (filter.priority) where.push('priority = @priority')
    if (filter.trigger_type) where.push('trigger_type = @trigger_type')
    if (filter.tag !== undefined) where.push('EXISTS (SELECT 1 FROM json_each(context_tags) WHERE value = @tag)')
    if (filter.due_at !== undefined) where.push('next_fire_at IS NOT NULL AND next_fire_at <= @due_at')
    if (filter.cursor !== undefined) where.push('id > @cursor')
    const sql = `SELECT * FROM reminders WHERE ${where.join(' AND ')} ORDER BY id LIMIT @limit`
    let stmt = this.listCache.get(sql)
    if (!stmt) {
      stmt = this.sqlite.prepare(sql)
      this.listCache.set(sql, stmt)
    }
    const limit = filter.limit ?? 50
    const params: Record<string, unknown> = { agent_id: agentId, limit: limit + 1 }
    for (const k of ['status', 'priority', 'trigger_type', 'tag', 'cursor', 'due_at'] as const) {
      if (filter[k] !== undefined) params[k] = filter[k]
    }
    const rows = stmt.all(params) as ReminderRow[]
    const more = rows.length > limit
    if (more) rows.length = limit
    return { rows, next_cursor: more ? (rows[rows.length - 1]?.id ?? null) : null }
  }
}
