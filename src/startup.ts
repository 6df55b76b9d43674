import ipaddr from 'ipaddr.js'
import { resolve } from 'node:path'
import type { Config } from './config.js'
import { openDb, type DbHandle, type SqliteHandle } from './db/client.js'
import { runMigrations } from './db/migrate.js'
import type { App } from './http/app.js'

/**
 * A start that cannot go on for a reason outside the configuration's syntax (the database file,
 * the listen address): server.ts prints its one-line message and exits 1, without a stack.
 */
export class StartupError extends Error {
  override name = 'StartupError'
}

const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/** `localhost` or any loopback address (127.0.0.0/8, ::1, ::ffff:127.x). */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback'
}

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
    const [{ openPg }, { runPgMigrations }] = await Promise.all([import('./db/postgres.js'), import('./db/pg-migrate.js')])
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

/** What a failed listen means, in terms of the HOST and PORT variables. */
export function describeListenError(err: unknown, host: string, port: number): string {
  const code = (err as { code?: unknown }).code
  const at = `HOST=${host} PORT=${port}`
  switch (code) {
    case 'EADDRINUSE':
      return `Cannot listen on ${at}: the port is already in use (EADDRINUSE); stop the other server or choose another PORT`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return `Cannot listen on ${at}: HOST is neither an IP address nor a name that resolves (${reason(err)})`
    case 'EADDRNOTAVAIL':
      return `Cannot listen on ${at}: HOST is not an address of this machine (EADDRNOTAVAIL)`
    case 'EACCES':
      return `Cannot listen on ${at}: permission denied (EACCES); ports below 1024 need privileges`
    default:
      return `Cannot listen on ${at}: ${reason(err)}`
  }
}

/**
 * Quick start: with no admin token on a loopback-only server, the first start on an empty
 * database creates one agent and prints its key once, so `npm start` is usable on its own.
 * Called once the server listens: a start that fails earlier (busy port) must not create a key
 * it then loses, since the next start would find an agent and print none.
 */
export async function bootstrapAgent(app: App, config: Config): Promise<void> {
  if (config.adminToken || !isLoopback(config.host) || (await app.services.agents.count()) > 0) return
  const agent = await app.services.agents.create('bootstrap')
  const line = `goalkeeper: created bootstrap agent ${agent.id}; its API key (shown once): ${agent.api_key}`
  process.stdout.write(`\n${line}\nUse it as: Authorization: Bearer ${agent.api_key}\n\n`)
}

/**
 * Off loopback and without an admin token there is no bootstrap agent and no way to create one:
 * with no agent in the database every /v1 call is refused. Say so instead of serving silently.
 */
export function unreachableWarning(config: Config, agentCount: number): string | undefined {
  if (config.adminToken || isLoopback(config.host) || agentCount > 0) return undefined
  return (
    `HOST=${config.host} is not a loopback address and GOALKEEPER_ADMIN_TOKEN is unset: no bootstrap agent is created ` +
    'off loopback and the admin routes are off, so with no agent in the database nothing under /v1 is reachable. ' +
    'Set GOALKEEPER_ADMIN_TOKEN (16+ characters) and create an agent with POST /v1/agents.'
  )
}
