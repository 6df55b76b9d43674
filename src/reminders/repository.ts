/**
 * The one module that reads and writes `reminders` and its two side tables, `reminder_fires`
 * (one row per announced occurrence) and `reminder_holds` (an occurrence quiet hours hold back).
 * Every SQL statement over them is here (full-text search over them is search.ts); where the
 * dialects differ both texts stand side by side, picked once at construction. Every write to a
 * reminder sets `updated_at`: the ticker tells a hold taken under an older plan by it. The callers
 * hold the transaction. Every statement is scoped by agent_id except the ticker's cross-agent
 * claim and the side tables' (keyed by the reminder's id), so another agent's id finds nothing.
 */
import type { SqlDatabase } from '../db/database.js'
import { Outbox } from '../webhooks/outbox.js'
import { ROW_COLUMNS, type ReminderPriority, type ReminderRow, type ReminderStatus, type TriggerType } from './model.js'

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

type Key = Pick<ReminderRow, 'id' | 'agent_id'>

/** The columns a fire changes (fire.ts `firedColumns`). */
export type FiredColumns = Pick<ReminderRow, 'status' | 'triggered_at' | 'last_fired_at' | 'snooze_until' | 'next_fire_at'>

export interface Hold {
  scheduled_for: number
  held_at: number
}

/** A due reminder a ticker holds a lease on until `claimed_until`. */
export interface Claim {
  id: string
  next_fire_at: number
  claimed_until: number
}

/** Rowids per agent block (SQLite FTS5): 2^32 reminders per agent, 2^21 agents within exact doubles. */
const DOC_BLOCK = 4294967296

const MUTABLE = ROW_COLUMNS.filter((c) => c !== 'id' && c !== 'agent_id' && c !== 'created_at')
const WHERE_KEY = 'WHERE agent_id = @agent_id AND id = @id'

/** A ReminderRow's SELECT list; PostgreSQL's boolean is read back as 0/1, as SQLite stores it. */
export function rowColumns(dialect: SqlDatabase['dialect'], alias = 'reminders'): string {
  return ROW_COLUMNS.map((c) => (c === 'quiet_hours_exempt' && dialect === 'postgres' ? `${alias}.${c}::int AS ${c}` : `${alias}.${c}`)).join(', ')
}

/** Every statement over the three tables, in the database's dialect. */
function statements(dialect: SqlDatabase['dialect']) {
  const pg = dialect === 'postgres'
  const cols = rowColumns(dialect)
  // Row locks for read-then-write paths: PostgreSQL runs transactions concurrently; SQLite's are
  // queued behind one another, so nothing can change a row between a read and a write there.
  const forUpdate = pg ? ' FOR UPDATE' : ''
  const live = "status IN ('pending', 'triggered', 'snoozed')"
  return {
    forUpdate,
    select: `SELECT ${cols} FROM reminders`,
    block: 'SELECT num FROM reminder_doc_blocks WHERE agent_id = ?',
    newBlock: `INSERT INTO reminder_doc_blocks (agent_id, num)
      VALUES (?, (SELECT ifnull(max(num), 0) + 1 FROM reminder_doc_blocks)) ON CONFLICT DO NOTHING`,
    // SQLite's doc_id: the next key in the agent's block; max() is one step down the unique doc_id index.
    insert: pg
      ? `INSERT INTO reminders (${ROW_COLUMNS.join(', ')}) VALUES (${ROW_COLUMNS.map((c) => `@${c}`).join(', ')})`
      : `INSERT INTO reminders (doc_id, ${ROW_COLUMNS.join(', ')})
      VALUES (ifnull((SELECT max(doc_id) FROM reminders WHERE doc_id >= @lo AND doc_id < @hi), @lo) + 1,
        ${ROW_COLUMNS.map((c) => `@${c}`).join(', ')})`,
    get: `SELECT ${cols} FROM reminders WHERE agent_id = ? AND id = ?`,
    update: `UPDATE reminders SET ${MUTABLE.map((c) => `${c} = @${c}`).join(', ')} ${WHERE_KEY}`,
    // Only the columns a fire changes, so indexes on the others are left alone.
    fired: `UPDATE reminders SET status = @status, triggered_at = @triggered_at, last_fired_at = @last_fired_at,
      snooze_until = @snooze_until, next_fire_at = @next_fire_at, updated_at = @updated_at ${WHERE_KEY}`,
    nextFire: `UPDATE reminders SET next_fire_at = @next_fire_at, updated_at = @updated_at ${WHERE_KEY}`,
    skip: `UPDATE reminders SET status = @status, next_fire_at = @next_fire_at, snooze_until = NULL,
      updated_at = @updated_at ${WHERE_KEY}`,
    delete: 'DELETE FROM reminders WHERE agent_id = ? AND id = ?',
    countLive: `SELECT count(*) AS n FROM reminders WHERE agent_id = ? AND ${live}`,
    due: `SELECT ${cols} FROM reminders WHERE agent_id = ? AND next_fire_at IS NOT NULL AND next_fire_at <= ?
      ORDER BY next_fire_at, id LIMIT ?`,
    followingAgentTz: `SELECT ${cols} FROM reminders
      WHERE agent_id = ? AND trigger_type = 'recurring' AND trigger_timezone IS NULL AND ${live}${forUpdate}`,
    session: 'SELECT 1 AS one FROM sessions WHERE agent_id = ? AND id = ?',
    // NO KEY: the reminders' foreign key to agents takes KEY SHARE locks, which this lets through.
    lockAgent: 'SELECT 1 AS one FROM agents WHERE id = ? FOR NO KEY UPDATE',
    tag: pg ? 'context_tags::jsonb @> jsonb_build_array(@tag::text)' : 'EXISTS (SELECT 1 FROM json_each(context_tags) WHERE value = @tag)',
    fireExists: 'SELECT 1 AS n FROM reminder_fires WHERE reminder_id = ? AND scheduled_for = ?',
    recordFire: `INSERT INTO reminder_fires (reminder_id, scheduled_for, agent_id, message_id, fired_at, late)
      VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    hold: 'SELECT scheduled_for, held_at FROM reminder_holds WHERE reminder_id = ?',
    // A stale hold is replaced whole: its scheduled_for belongs to the old plan too.
    putHold: `INSERT INTO reminder_holds (reminder_id, scheduled_for, held_at) VALUES (?, ?, ?)
      ON CONFLICT (reminder_id) DO UPDATE SET scheduled_for = excluded.scheduled_for, held_at = excluded.held_at`,
    dropHold: 'DELETE FROM reminder_holds WHERE reminder_id = ?',
    // The ticker's claim: due reminders no live lease covers, soonest first, on the partial
    // next_fire_at index. SKIP LOCKED lets replicas claim side by side without waiting on each
    // other's rows; SQLite has one writer at a time and no such clause.
    claim: `UPDATE reminders SET claimed_until = @until WHERE id IN (
        SELECT id FROM reminders WHERE next_fire_at IS NOT NULL AND next_fire_at <= @now
          AND (claimed_until IS NULL OR claimed_until <= @now)
        ORDER BY next_fire_at LIMIT @limit${pg ? ' FOR UPDATE SKIP LOCKED' : ''})
      RETURNING id, next_fire_at, claimed_until`,
    // Still this lease's (not retaken after it expired), locked until the fire commits.
    claimed: `SELECT ${cols} FROM reminders WHERE id = ? AND claimed_until = ?${forUpdate}`,
    release: 'UPDATE reminders SET claimed_until = NULL WHERE id = ? AND claimed_until = ?',
  }
}

export class ReminderRepository {
  readonly db: SqlDatabase
  /** A fire's `reminder.triggered` messages commit with the fire. */
  readonly outbox: Outbox

  private readonly s: ReturnType<typeof statements>

  constructor(db: SqlDatabase) {
    this.db = db
    this.outbox = new Outbox(db)
    this.s = statements(db.dialect)
  }

  /** SQLite only: the agent's FTS rowid range [lo, hi), or null before its first reminder. */
  async docRange(agentId: string): Promise<{ lo: number; hi: number } | null> {
    const b = await this.db.get<{ num: number }>(this.s.block, [agentId])
    return b ? { lo: b.num * DOC_BLOCK, hi: (b.num + 1) * DOC_BLOCK } : null
  }

  // ---- reminders: reads

  /** `lock`: on PostgreSQL, hold the row until the transaction ends (a read-then-write). */
  get(agentId: string, id: string, lock = false): Promise<ReminderRow | undefined> {
    return this.db.get<ReminderRow>(lock ? this.s.get + this.s.forUpdate : this.s.get, [agentId, id])
  }

  async countLive(agentId: string): Promise<number> {
    return (await this.db.get<{ n: number }>(this.s.countLive, [agentId]))?.n ?? 0
  }

  /** True when the session exists and is this agent's (a reminder may only link to its own). */
  async hasSession(agentId: string, sessionId: string): Promise<boolean> {
    return (await this.db.get(this.s.session, [agentId, sessionId])) !== undefined
  }

  /** Live reminders whose next fire time is at or before `asOfMs`, soonest first; `lock` as in `get`. */
  due(agentId: string, asOfMs: number, limit = 200, lock = false): Promise<ReminderRow[]> {
    return this.db.all<ReminderRow>(lock ? this.s.due + this.s.forUpdate : this.s.due, [agentId, asOfMs, limit])
  }

  /** Live recurring reminders without a timezone of their own (they follow the agent's), locked for a re-plan. */
  followingAgentTimezone(agentId: string): Promise<ReminderRow[]> {
    return this.db.all<ReminderRow>(this.s.followingAgentTz, [agentId])
  }

  /** One page in id (= creation) order; fetches one extra row to know whether more follow. */
  async list(agentId: string, filter: ListFilter): Promise<{ rows: ReminderRow[]; next_cursor: string | null }> {
    const where = ['agent_id = @agent_id']
    if (filter.status) where.push('status = @status')
    if (filter.priority) where.push('priority = @priority')
    if (filter.trigger_type) where.push('trigger_type = @trigger_type')
    if (filter.tag !== undefined) where.push(this.s.tag)
    if (filter.due_at !== undefined) where.push('next_fire_at IS NOT NULL AND next_fire_at <= @due_at')
    if (filter.cursor !== undefined) where.push('id > @cursor')
    const limit = filter.limit ?? 50
    const params: Record<string, unknown> = { agent_id: agentId, limit: limit + 1 }
    for (const k of ['status', 'priority', 'trigger_type', 'tag', 'cursor', 'due_at'] as const) {
      if (filter[k] !== undefined) params[k] = filter[k]
    }
    const rows = await this.db.all<ReminderRow>(`${this.s.select} WHERE ${where.join(' AND ')} ORDER BY id LIMIT @limit`, params)
    const more = rows.length > limit
    if (more) rows.length = limit
    return { rows, next_cursor: more ? (rows[rows.length - 1]?.id ?? null) : null }
  }

  // ---- reminders: writes

  /** PostgreSQL: holds the agent's row until the transaction ends, so its quota checks take turns. */
  async lockAgent(agentId: string): Promise<void> {
    if (this.db.dialect === 'postgres') await this.db.get(this.s.lockAgent, [agentId])
  }

  /** Inserts a row (its created_at and updated_at are the caller's now). */
  async insert(row: ReminderRow): Promise<void> {
    if (this.db.dialect === 'postgres') {
      await this.db.run(this.s.insert, { ...row })
      return
    }
    await this.db.run(this.s.newBlock, [row.agent_id])
    const range = await this.docRange(row.agent_id)
    await this.db.run(this.s.insert, { ...row, lo: range?.lo, hi: range?.hi })
  }

  /** Writes every column a client may change; returns the row as stored, updated at `nowMs`. */
  async update<R extends ReminderRow>(row: R, nowMs: number): Promise<R> {
    const saved = { ...row, updated_at: nowMs }
    await this.db.run(this.s.update, { ...(saved as ReminderRow) })
    return saved
  }

  /** Writes what a fire changes; returns the row as it is after the fire. */
  async markFired(row: ReminderRow, fired: FiredColumns, nowMs: number): Promise<ReminderRow> {
    const after: ReminderRow = { ...row, ...fired, updated_at: nowMs }
    await this.db.run(this.s.fired, {
      id: after.id,
      agent_id: after.agent_id,
      status: after.status,
      triggered_at: after.triggered_at,
      last_fired_at: after.last_fired_at,
      snooze_until: after.snooze_until,
      next_fire_at: after.next_fire_at,
      updated_at: nowMs,
    })
    return after
  }

  /** Moves the next fire time (a quiet-hours hold, a re-plan for a new agent timezone). */
  async setNextFire(row: Key, nextFireAt: number | null, nowMs: number): Promise<void> {
    await this.db.run(this.s.nextFire, { id: row.id, agent_id: row.agent_id, next_fire_at: nextFireAt, updated_at: nowMs })
  }

  /** A due occurrence passed over without a fire: the new status and next fire time, the snooze used up. */
  async skip(row: Key, status: ReminderStatus, nextFireAt: number | null, nowMs: number): Promise<void> {
    await this.db.run(this.s.skip, { id: row.id, agent_id: row.agent_id, status, next_fire_at: nextFireAt, updated_at: nowMs })
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    return (await this.db.run(this.s.delete, [agentId, id])) > 0
  }

  // ---- the ticker's leases (claimed_until)

  /**
   * Claims up to `limit` due reminders until `untilMs` (a transaction of its own: the claim is
   * visible to other replicas at once). Soonest first.
   */
  async claimDue(nowMs: number, untilMs: number, limit: number): Promise<Claim[]> {
    // A transaction, though one statement: it writes through `all` (RETURNING), which SQLite
    // would otherwise run at once inside whatever transaction is open.
    const rows = await this.db.transaction(() => this.db.all<Claim>(this.s.claim, { now: nowMs, until: untilMs, limit }))
    return rows.sort((a, b) => a.next_fire_at - b.next_fire_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  /** The claimed row, locked, while the lease is still `claim`'s; undefined once another ticker retook it (or it is gone). */
  claimed(claim: Claim): Promise<ReminderRow | undefined> {
    return this.db.get<ReminderRow>(this.s.claimed, [claim.id, claim.claimed_until])
  }

  async release(claim: Claim): Promise<void> {
    await this.db.run(this.s.release, [claim.id, claim.claimed_until])
  }

  // ---- reminder_fires: one row per announced occurrence, keyed (reminder_id, scheduled_for)

  /** True when this occurrence of the reminder was already announced. */
  async hasFired(reminderId: string, scheduledFor: number): Promise<boolean> {
    return (await this.db.get(this.s.fireExists, [reminderId, scheduledFor])) !== undefined
  }

  async recordFire(row: Key, scheduledFor: number, messageId: string, nowMs: number, late: boolean): Promise<void> {
    // 1/0: SQLite's boolean; PostgreSQL's boolean takes '1'/'0' as well.
    await this.db.run(this.s.recordFire, [row.id, scheduledFor, row.agent_id, messageId, nowMs, late ? 1 : 0])
  }

  // ---- reminder_holds: at most one held occurrence per reminder

  hold(reminderId: string): Promise<Hold | undefined> {
    return this.db.get<Hold>(this.s.hold, [reminderId])
  }

  async putHold(reminderId: string, scheduledFor: number, nowMs: number): Promise<void> {
    await this.db.run(this.s.putHold, [reminderId, scheduledFor, nowMs])
  }

  async dropHold(reminderId: string): Promise<void> {
    await this.db.run(this.s.dropHold, [reminderId])
  }
}
