import { resolve } from 'node:path'
import type { Config } from '../config.js'
import { reason, StartupError } from '../startup.js'
import { openDb, type DbHandle, type SqliteHandle } from './client.js'
import { runMigrations } from './migrate.js'

/**
 * The configured database, migrated: PostgreSQL when GOALKEEPER_DATABASE_URL is set, else the
 * SQLite file at GOALKEEPER_DB. Any failure is said in one line naming the variable and the cause.
 */
export async function openDatabase(config: Pick<Config, 'dbPath' | 'databaseUrl' | 'statementTimeoutMs'>): Promise<DbHandle> {
  return config.databaseUrl === undefined ? openSqlite(config.dbPath) : openPostgres(config.databaseUrl, config.statementTimeoutMs)
}

function openSqlite(dbPath: string): DbHandle {
  let handle: SqliteHandle | undefined
  try {
    handle = openDb(dbPath)
    runMigrations(handle)
    return handle
  } catch (err) {
    void handle?.close()
    const file = dbPath === ':memory:' || resolve(dbPath) === dbPath ? dbPath : `${dbPath} (${resolve(dbPath)})`
    throw new StartupError(`Cannot open the database: GOALKEEPER_DB=${file}: ${reason(err)}`)
  }
}

/** Replicas starting together migrate one at a time (an advisory lock), the others then find nothing to do. */
async function openPostgres(databaseUrl: string, statementTimeoutMs: number): Promise<DbHandle> {
  let handle: DbHandle | undefined
  try {
    // Loaded here only: the driver and its migrator are ~6 MB of RSS that a SQLite deployment never uses.
    const [{ openPg }, { runPgMigrations }] = await Promise.all([import('./postgres.js'), import('./pg-migrate.js')])
    const pg = openPg(databaseUrl, { statementTimeoutMs })
    handle = pg
    await runPgMigrations(pg)
    return pg
  } catch (err) {
    await handle?.close().catch(() => undefined)
    throw new StartupError(`Cannot open the database: GOALKEEPER_DATABASE_URL=${redactUrl(databaseUrl)}: ${reason(err)}`)
  }
}

/** The URL without its password, for a message that may end up in logs. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    return u.toString()
  } catch {
    return '(unparseable URL)'
  }
}
