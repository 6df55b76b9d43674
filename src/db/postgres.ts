import pg from 'pg'
import type { DbHandle } from './client.js'
import { PgDatabase } from './pg-database.js'
import { pgMigrationsApplied } from './pg-migrate.js'

/** A pool of connections to one PostgreSQL database: `db` for the services, the pool for migrations. */
export interface PgHandle extends DbHandle {
  readonly db: PgDatabase
  readonly pool: pg.Pool
  /** The database's URL: migrations run on a connection of their own, without the pool's timeouts. */
  readonly url: string
}

export interface PgOptions {
  /** Pooled connections (default 10). */
  max?: number
  /**
   * Bounds every wait on the database: the server cuts a statement running (or waiting for a lock)
   * this long, and ends a session left idle inside a transaction this long (a stalled client's
   * locks are freed); connecting, or waiting for a pooled connection, gives up after it. Unset: no bounds.
   */
  statementTimeoutMs?: number
}

/**
 * The client's own cut comes this long after the server's statement timeout, so a slow statement is
 * normally cut by the server (the connection stays usable) and the client's cut only meets a server,
 * or a network, that does not answer at all.
 */
const CLIENT_TIMEOUT_MARGIN_MS = 1000

const INT8_OID = 20

// Epoch milliseconds and serials are int8, which pg hands back as strings (they may exceed 2^53);
// ours stay far below, so they are read as numbers, as SQLite gives them.
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format))) as pg.CustomTypesConfig['getTypeParser'],
}

export function openPg(url: string, options: PgOptions = {}): PgHandle {
  const ms = options.statementTimeoutMs
  const bounds: pg.PoolConfig =
    ms === undefined
      ? {}
      : {
          statement_timeout: ms,
          idle_in_transaction_session_timeout: ms,
          query_timeout: ms + CLIENT_TIMEOUT_MARGIN_MS,
          connectionTimeoutMillis: ms,
        }
  // keepAlive: a connection whose peer vanished without a word is found dead by TCP, not kept forever.
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, types, keepAlive: true, ...bounds })
  // An idle client's connection dropped by the server must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  const db = new PgDatabase(pool)
  const handle: PgHandle = {
    db,
    pool,
    url,
    migrated: () => pgMigrationsApplied(handle),
    close: () => db.close(),
  }
  return handle
}
