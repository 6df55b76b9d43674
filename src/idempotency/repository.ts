/**
 * Every SQL statement over `idempotency_keys`. Row types come from the Drizzle schema
 * (src/db/schema/idempotency.ts). The SQL is the same on both dialects.
 */
import type { InferSelectModel } from 'drizzle-orm'
import type { SqlDatabase } from '../db/database.js'
import type { idempotencyKeys } from '../db/schema/index.js'

export type IdempotencyRow = InferSelectModel<typeof idempotencyKeys, { dbColumnNames: true }>

/** Claims the key, or takes over an expired record of it; a live record stays (0 rows changed). */
const CLAIM = `INSERT INTO idempotency_keys (scope, key, agent_id, method, path, body_hash, status, response_body, created_at)
  VALUES (@scope, @key, @agent_id, @method, @path, @body_hash, @status, @response_body, @created_at)
  ON CONFLICT (scope, key) DO UPDATE SET agent_id = excluded.agent_id, method = excluded.method, path = excluded.path,
    body_hash = excluded.body_hash, status = excluded.status, response_body = excluded.response_body, created_at = excluded.created_at
  WHERE idempotency_keys.created_at < @expired_before`

export class IdempotencyRepository {
  private readonly db: SqlDatabase

  constructor(db: SqlDatabase) {
    this.db = db
  }

  find(scope: string, key: string): Promise<IdempotencyRow | undefined> {
    return this.db.get('SELECT * FROM idempotency_keys WHERE scope = ? AND key = ?', [scope, key])
  }

  /**
   * Stores the record unless a live one (created at or after `expiredBefore`) holds the key: false
   * then. Two requests with one key committing at once (two replicas) cannot both store theirs:
   * the second waits on the first's row and then finds it live.
   */
  async claim(row: IdempotencyRow, expiredBefore: number): Promise<boolean> {
    return (await this.db.run(CLAIM, { ...row, expired_before: expiredBefore })) === 1
  }

  /** An indexed range delete (idempotency_keys_created_idx): cheap however large the table grows. */
  deleteOlderThan(ms: number): Promise<number> {
    return this.db.run('DELETE FROM idempotency_keys WHERE created_at < ?', [ms])
  }
}
