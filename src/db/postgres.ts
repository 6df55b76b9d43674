import pg from 'pg'
import type { DbHandle } from './client.js'
import { PgDatabase } from './pg-database.js'
import { pgMigrationsApplied } from './pg-migrate.js'

/** A pool of connections to one PostgreSQL database: `db` for the services, the pool for migrations. */
export interface PgHandle extends DbHandle {
  readonly db: PgDatabase
  readonly pool: pg.Pool
}

const INT8_OID = 20

// Epoch milliseconds and serials are int8, which pg hands back as strings (they may exceed 2^53);
// ours stay far below, so they are read as numbers, as SQLite gives them.
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
}

export function openPg(url: string, options: { max?: number } = {}): PgHandle {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, types })
  // An idle client's connection dropped by the server must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  const db = new PgDatabase(pool)
  const handle: PgHandle = {
    db,
    pool,
    migrated: () => pgMigrationsApplied(handle),
    close: () => db.close(),
  }
  return handle
}
