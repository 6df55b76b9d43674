/**
 * Every SQL statement over `otlp_records` (src/db/schema/otlp.ts), on either dialect; every one is
 * scoped by agent.
 */
import type { SqlDatabase } from '../db/database.js'
import type { Observed, ObservedRecord } from './observed.js'

// `state`: 0 while waiting (written as a literal in the SQL: the partial index otlp_records_waiting_idx
// is only chosen for a literal), then one of these.
export const APPLIED = 1
export const DROPPED = 2

export interface WaitingRecord {
  seq: number
  record: ObservedRecord
  createdAt: number
}

/** Rows per INSERT: 6 parameters each, well under either dialect's limit on parameters. */
const INSERT_ROWS = 500

export class OtlpRepository {
  private readonly db: SqlDatabase

  constructor(db: SqlDatabase) {
    this.db = db
  }

  /** Inserts what is new and returns how many were; a key already there (a duplicate delivery) inserts nothing. */
  async insert(agentId: string, observed: readonly Observed[], now: number): Promise<number> {
    let inserted = 0
    for (let i = 0; i < observed.length; i += INSERT_ROWS) {
      const chunk = observed.slice(i, i + INSERT_ROWS)
      const params: unknown[] = []
      for (const o of chunk) params.push(agentId, o.conversation, o.key, o.record.kind, JSON.stringify(o.record), now)
      inserted += await this.db.run(
        `INSERT INTO otlp_records (agent_id, conversation, key, kind, payload, created_at) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}
         ON CONFLICT (agent_id, conversation, key) DO NOTHING`,
        params,
      )
    }
    return inserted
  }

  /** The conversation's waiting records, oldest first. */
  async waiting(agentId: string, conversation: string, limit: number): Promise<WaitingRecord[]> {
    const rows = await this.db.all<{ seq: number | string; payload: string; created_at: number | string }>(
      'SELECT seq, payload, created_at FROM otlp_records WHERE agent_id = ? AND conversation = ? AND state = 0 ORDER BY seq LIMIT ?',
      [agentId, conversation, limit],
    )
    return rows.map((r) => ({ seq: Number(r.seq), record: JSON.parse(r.payload) as ObservedRecord, createdAt: Number(r.created_at) }))
  }

  /**
   * Marks waiting records applied (with the step they are, or were counted on) or dropped; throws
   * Claimed when any of them is no longer waiting (another process applied it first), so the write
   * it joins rolls back.
   */
  async settle(agentId: string, seqs: readonly number[], state: typeof APPLIED | typeof DROPPED, stepNumber: number | null = null): Promise<void> {
    if (seqs.length === 0) return
    const changed = await this.db.run(`UPDATE otlp_records SET state = ?, step_number = ?, payload = NULL WHERE agent_id = ? AND state = 0 AND seq IN (${seqs.map(() => '?').join(', ')})`, [
      state,
      stepNumber,
      agentId,
      ...seqs,
    ])
    if (changed !== seqs.length) throw new Claimed()
  }

  /** Conversations with waiting records other than usage (which waits for a step), oldest first. */
  async waitingConversations(limit: number): Promise<{ agent_id: string; conversation: string }[]> {
    return this.db.all(
      `SELECT agent_id, conversation FROM otlp_records WHERE state = 0 AND kind <> 'usage'
       GROUP BY agent_id, conversation ORDER BY MIN(seq) LIMIT ?`,
      [limit],
    )
  }

  /** Deletes up to `limit` settled records stored before `before` (their keys no longer needed); returns how many. */
  prune(before: number, limit: number): Promise<number> {
    return this.db.run('DELETE FROM otlp_records WHERE seq IN (SELECT seq FROM otlp_records WHERE state <> 0 AND created_at < ? ORDER BY seq LIMIT ?)', [before, limit])
  }
}

/** A record another process settled first. */
export class Claimed extends Error {}
