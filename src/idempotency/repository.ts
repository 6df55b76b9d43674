/**
 * Every SQL statement over `idempotency_keys`. Row types come from the Drizzle schema
 * (src/db/schema/idempotency.ts).
 */
import type Database from 'better-sqlite3'
import type { InferSelectModel } from 'drizzle-orm'
import { preparer, type Stmt } from '../db/lazy-statement.js'
import type { idempotencyKeys } from '../db/schema/index.js'

export type IdempotencyRow = InferSelectModel<typeof idempotencyKeys, { dbColumnNames: true }>

export class IdempotencyRepository {
  private readonly oneRow: Stmt<[string, string], IdempotencyRow>
  private readonly unsealedRows: Stmt<[string], IdempotencyRow>
  private readonly upsertRow: Stmt<[IdempotencyRow]>
  private readonly resealRow: Stmt<[{ scope: string; key: string; new_key: string; response_body: string }]>
  private readonly pruneRows: Stmt<[number]>

  constructor(sqlite: Database.Database) {
    const prepare = preparer(sqlite)
    this.oneRow = prepare('SELECT * FROM idempotency_keys WHERE scope = ? AND key = ?')
    this.unsealedRows = prepare(`SELECT * FROM idempotency_keys WHERE response_body NOT LIKE ? || '%'`)
    this.upsertRow = prepare(`INSERT INTO idempotency_keys (scope, key, agent_id, method, path, body_hash, status, response_body, created_at)
      VALUES (@scope, @key, @agent_id, @method, @path, @body_hash, @status, @response_body, @created_at)
      ON CONFLICT (scope, key) DO UPDATE SET agent_id = excluded.agent_id, method = excluded.method, path = excluded.path,
        body_hash = excluded.body_hash, status = excluded.status, response_body = excluded.response_body, created_at = excluded.created_at`)
    this.resealRow = prepare('UPDATE idempotency_keys SET key = @new_key, response_body = @response_body WHERE scope = @scope AND key = @key')
    // An indexed range delete (idempotency_keys_created_idx): cheap however large the table grows.
    this.pruneRows = prepare('DELETE FROM idempotency_keys WHERE created_at < ?')
  }

  find(scope: string, key: string): IdempotencyRow | undefined {
    return this.oneRow.get(scope, key)
  }

  /** Rows whose response body does not start with `prefix` (written before sealing). */
  withoutPrefix(prefix: string): IdempotencyRow[] {
    return this.unsealedRows.all(prefix)
  }

  upsert(row: IdempotencyRow): void {
    this.upsertRow.run(row)
  }

  /** Rewrites a row's key and body in place (sealing a row written before sealing). */
  reseal(scope: string, key: string, sealedKey: string, sealedBody: string): void {
    this.resealRow.run({ scope, key, new_key: sealedKey, response_body: sealedBody })
  }

  deleteOlderThan(ms: number): number {
    return this.pruneRows.run(ms).changes
  }
}
