/**
 * The one module that reads and writes `reminders` and its two side tables, `reminder_fires`
 * (one row per announced occurrence) and `reminder_holds` (an occurrence quiet hours hold back).
 * Every SQL statement over them is here (full-text search over them is search.ts), so a second
 * SQL dialect replaces these files and nothing above them. Every write to a reminder sets
 * `updated_at`: the ticker tells a hold taken under an older plan by it. Statements are prepared
 * on first use (`lazyPrepare`); the callers hold the transaction. Every statement is scoped by agent_id except the scheduler's cross-agent scan and
 * the side tables' (keyed by the reminder's id), so another agent's id simply finds nothing.
 */
import type Database from 'better-sqlite3'
import { Outbox } from '../webhooks/outbox.js'
import { preparer, type Stmt } from '../db/lazy-statement.js'
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
type Key = Pick<ReminderRow, 'id' | 'agent_id'>

/** The columns a fire changes (fire.ts `firedColumns`). */
export type FiredColumns = Pick<ReminderRow, 'status' | 'triggered_at' | 'last_fired_at' | 'snooze_until' | 'next_fire_at'>

export interface Hold {
  scheduled_for: number
  held_at: number
}

const COLUMNS = ROW_COLUMNS.filter((c): c is Exclude<typeof c, 'doc_id'> => c !== 'doc_id')

const MUTABLE = COLUMNS.filter((c) => c !== 'id' && c !== 'agent_id' && c !== 'created_at')

/** Rowids per agent block: 2^32 reminders per agent, 2^21 agents within exact doubles. */
export const DOC_BLOCK = 4294967296

const WHERE_KEY = 'WHERE agent_id = @agent_id AND id = @id'

/** Every statement over the three tables, each compiled on first use. */
function statements(sqlite: Database.Database) {
  const prep = preparer(sqlite)
  return {
    block: prep<Stmt<[string], { num: number }>>('SELECT num FROM reminder_doc_blocks WHERE agent_id = ?'),
    newBlock: prep<Stmt<[string]>>(`INSERT OR IGNORE INTO reminder_doc_blocks (agent_id, num)
      VALUES (?, (SELECT ifnull(max(num), 0) + 1 FROM reminder_doc_blocks))`),
    // doc_id: the next key in the agent's block; max() is one step down the unique doc_id index.
    insert: prep(`INSERT INTO reminders (doc_id, ${COLUMNS.join(', ')})
      VALUES (ifnull((SELECT max(doc_id) FROM reminders WHERE doc_id >= @lo AND doc_id < @hi), @lo) + 1,
        ${COLUMNS.map((c) => `@${c}`).join(', ')})`),
    get: prep<Stmt<[string, string], ReminderRow>>('SELECT * FROM reminders WHERE agent_id = ? AND id = ?'),
    update: prep(`UPDATE reminders SET ${MUTABLE.map((c) => `${c} = @${c}`).join(', ')} ${WHERE_KEY}`),
    // Only the columns a fire changes, so indexes on the others are left alone.
    fired: prep(`UPDATE reminders SET status = @status, triggered_at = @triggered_at, last_fired_at = @last_fired_at,
      snooze_until = @snooze_until, next_fire_at = @next_fire_at, updated_at = @updated_at ${WHERE_KEY}`),
    nextFire: prep(`UPDATE reminders SET next_fire_at = @next_fire_at, updated_at = @updated_at ${WHERE_KEY}`),
    skip: prep(`UPDATE reminders SET status = @status, next_fire_at = @next_fire_at, snooze_until = NULL,
      updated_at = @updated_at ${WHERE_KEY}`),
    delete: prep<Stmt<[string, string]>>('DELETE FROM reminders WHERE agent_id = ? AND id = ?'),
    countLive: prep<Stmt<[string], { n: number }>>(
      "SELECT count(*) AS n FROM reminders WHERE agent_id = ? AND status IN ('pending', 'triggered', 'snoozed')",
    ),
    due: prep<Stmt<[string, number, number], unknown[]>>(`SELECT ${rowSelect('reminders')} FROM reminders
      WHERE agent_id = ? AND next_fire_at IS NOT NULL AND next_fire_at <= ? ORDER BY next_fire_at, id LIMIT ?`),
    dueAll: prep<Stmt<[number, number], unknown[]>>(`SELECT ${rowSelect('reminders')} FROM reminders
      WHERE next_fire_at IS NOT NULL AND next_fire_at <= ? ORDER BY next_fire_at LIMIT ?`),
    followingAgentTz: prep<Stmt<[string], unknown[]>>(`SELECT ${rowSelect('reminders')} FROM reminders
      WHERE agent_id = ? AND trigger_type = 'recurring' AND trigger_timezone IS NULL AND status IN ('pending', 'triggered', 'snoozed')`),
    session: prep<Stmt<[string, string], { one: number }>>('SELECT 1 AS one FROM sessions WHERE agent_id = ? AND id = ?'),
    fireExists: prep<Stmt<[string, number], { n: number }>>(
      'SELECT 1 AS n FROM reminder_fires WHERE reminder_id = ? AND scheduled_for = ?',
    ),
    recordFire: prep(`INSERT INTO reminder_fires (reminder_id, scheduled_for, agent_id, message_id, fired_at, late)
      VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
    hold: prep<Stmt<[string], Hold>>('SELECT scheduled_for, held_at FROM reminder_holds WHERE reminder_id = ?'),
    // A stale hold is replaced whole: its scheduled_for belongs to the old plan too.
    putHold: prep(`INSERT INTO reminder_holds (reminder_id, scheduled_for, held_at) VALUES (?, ?, ?)
      ON CONFLICT (reminder_id) DO UPDATE SET scheduled_for = excluded.scheduled_for, held_at = excluded.held_at`),
    dropHold: prep<Stmt<[string]>>('DELETE FROM reminder_holds WHERE reminder_id = ?'),
  }
}

export class ReminderStore {
  readonly sqlite: Database.Database
  /** A fire's `reminder.triggered` messages commit with the fire. */
  readonly outbox: Outbox

  private readonly s: ReturnType<typeof statements>
  private readonly listCache = new Map<string, Database.Statement>()

  constructor(sqlite: Database.Database) {
    this.sqlite = sqlite
    this.outbox = new Outbox(sqlite)
    this.s = statements(sqlite)
  }

  /** The agent's FTS rowid range [lo, hi), or null before its first reminder. */
  docRange(agentId: string): { lo: number; hi: number } | null {
    const b = this.s.block.get(agentId)
    return b ? { lo: b.num * DOC_BLOCK, hi: (b.num + 1) * DOC_BLOCK } : null
  }

  // ---- reminders: reads

  get(agentId: string, id: string): ReminderRow | undefined {
    return this.s.get.get(agentId, id)
  }

  countLive(agentId: string): number {
    return this.s.countLive.get(agentId)?.n ?? 0
  }

  /** True when the session exists and is this agent's (a reminder may only link to its own). */
  hasSession(agentId: string, sessionId: string): boolean {
    return this.s.session.get(agentId, sessionId) !== undefined
  }

  /** Live reminders whose next fire time is at or before `asOfMs`, soonest first. */
  due(agentId: string, asOfMs: number, limit = 200): ReminderRow[] {
    return this.s.due.raw(true).all(agentId, asOfMs, limit).map(rowFromArray)
  }

  /** The scheduler's scan: every agent's reminders due at `asOfMs`, soonest first. */
  dueAll(asOfMs: number, limit: number): ReminderRow[] {
    return this.s.dueAll.raw(true).all(asOfMs, limit).map(rowFromArray)
  }

  /** Live recurring reminders without a timezone of their own: they follow the agent's. */
  followingAgentTimezone(agentId: string): ReminderRow[] {
    return this.s.followingAgentTz.raw(true).all(agentId).map(rowFromArray)
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

  // ---- reminders: writes

  /** Inserts a row (its created_at and updated_at are the caller's now). */
  insert(row: Writable): void {
    this.s.newBlock.run(row.agent_id)
    const range = this.docRange(row.agent_id)
    this.s.insert.run({ ...row, lo: range?.lo, hi: range?.hi })
  }

  /** Writes every column a client may change; returns the row as stored, updated at `nowMs`. */
  update<R extends Writable>(row: R, nowMs: number): R {
    const saved = { ...row, updated_at: nowMs }
    this.s.update.run(saved)
    return saved
  }

  /** Writes what a fire changes; returns the row as it is after the fire. */
  markFired(row: ReminderRow, fired: FiredColumns, nowMs: number): ReminderRow {
    const after: ReminderRow = { ...row, ...fired, updated_at: nowMs }
    this.s.fired.run({
      id: after.id, agent_id: after.agent_id, status: after.status, triggered_at: after.triggered_at,
      last_fired_at: after.last_fired_at, snooze_until: after.snooze_until, next_fire_at: after.next_fire_at,
      updated_at: nowMs,
    })
    return after
  }

  /** Moves the next fire time (a quiet-hours hold, a re-plan for a new agent timezone). */
  setNextFire(row: Key, nextFireAt: number | null, nowMs: number): void {
    this.s.nextFire.run({ id: row.id, agent_id: row.agent_id, next_fire_at: nextFireAt, updated_at: nowMs })
  }

  /** A due occurrence passed over without a fire: the new status and next fire time, the snooze used up. */
  skip(row: Key, status: ReminderStatus, nextFireAt: number | null, nowMs: number): void {
    this.s.skip.run({ id: row.id, agent_id: row.agent_id, status, next_fire_at: nextFireAt, updated_at: nowMs })
  }

  delete(agentId: string, id: string): boolean {
    return this.s.delete.run(agentId, id).changes > 0
  }

  // ---- reminder_fires: one row per announced occurrence, keyed (reminder_id, scheduled_for)

  /** True when this occurrence of the reminder was already announced. */
  hasFired(reminderId: string, scheduledFor: number): boolean {
    return this.s.fireExists.get(reminderId, scheduledFor) !== undefined
  }

  recordFire(row: Key, scheduledFor: number, messageId: string, nowMs: number, late: boolean): void {
    this.s.recordFire.run(row.id, scheduledFor, row.agent_id, messageId, nowMs, late ? 1 : 0)
  }

  // ---- reminder_holds: at most one held occurrence per reminder

  hold(reminderId: string): Hold | undefined {
    return this.s.hold.get(reminderId)
  }

  putHold(reminderId: string, scheduledFor: number, nowMs: number): void {
    this.s.putHold.run(reminderId, scheduledFor, nowMs)
  }

  dropHold(reminderId: string): void {
    this.s.dropHold.run(reminderId)
  }
}
