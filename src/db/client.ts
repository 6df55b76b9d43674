import type Database from 'better-sqlite3'
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3'
import type { SqlDatabase } from './database.js'
import { migrationsApplied } from './migrate.js'
import * as schema from './schema/index.js'
import { SqliteDatabase } from './sqlite-database.js'
import { Sqlite } from './sqlite-driver.js'

/** An open database of either dialect: what the services and routes are given. */
export interface DbHandle {
  readonly db: SqlDatabase
  /** True when every migration this build knows has been applied (/readyz). */
  migrated(): Promise<boolean>
  close(): Promise<void>
}

/** The embedded SQLite file: the same `db`, plus the raw connection for migrations and maintenance. */
export interface SqliteHandle extends DbHandle {
  readonly db: SqliteDatabase
  readonly sqlite: Database.Database
  /** Drizzle on the connection, for its migrator. */
  readonly drizzle: BetterSQLite3Database<typeof schema>
}

/** SQLite page cache per connection, in KiB. */
export const CACHE_SIZE_KIB = 8 * 1024

/**
 * Creates `dir` and its missing parents one level at a time. Node's `mkdirSync(…, { recursive })`
 * retries forever when a parent cannot be made but reports ENOENT (`/proc/nope/x` spins at 100%
 * CPU, deaf to SIGTERM); single-level calls fail at once, and an existing non-directory on the
 * way is named instead of surfacing as EEXIST or ENOTDIR.
 */
function makeDirs(dir: string): void {
  const missing: string[] = []
  let at = resolve(dir)
  while (!existsSync(at)) {
    missing.push(at)
    const up = dirname(at)
    if (up === at) break
    at = up
  }
  if (existsSync(at) && !statSync(at).isDirectory()) throw new Error(`${at} is not a directory`)
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d)
    } catch (err) {
      // Another process may create the same folder meanwhile; that is as good as ours.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
  }
}

/**
 * Opens (creating its folder) a SQLite file, or `:memory:`, with the pragmas DESIGN.md asks for.
 * Its transactions group-commit (src/db/sqlite-database.ts).
 */
export function openDb(path: string): SqliteHandle {
  if (path !== ':memory:') {
    makeDirs(dirname(path))
    // SQLite would only say "unable to open database file".
    if (existsSync(path) && statSync(path).isDirectory()) throw new Error(`${resolve(path)} is a directory`)
  }
  const sqlite = new Sqlite(path, { timeout: 5000 })
  try {
    configure(sqlite)
  } catch (err) {
    // e.g. "file is not a database": the first pragma is the first read.
    sqlite.close()
    throw err
  }
  const db = new SqliteDatabase(sqlite, { groupCommit: true })
  const handle: SqliteHandle = {
    db,
    sqlite,
    drizzle: drizzle({ client: sqlite, schema }),
    migrated: async () => migrationsApplied(handle),
    close: () => db.close(),
  }
  return handle
}

function configure(sqlite: Database.Database): void {
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('temp_store = MEMORY')
  // 8 MB page cache instead of SQLite's 2 MB keeps the hot session, journal and step-index pages
  // cached under load. 32 MB saved a further ~15% of server CPU per step in full bench:http runs
  // (not in single-scenario ones) but held ~25 MB more RSS in bench:memory (171 vs 145 MB).
  sqlite.pragma(`cache_size = -${CACHE_SIZE_KIB}`)
}
