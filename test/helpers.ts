import type Database from 'better-sqlite3'
import { afterEach } from 'vitest'
import { loadConfig, type Config } from '../src/config.js'
import { openDb, type DbHandle } from '../src/db/client.js'
import type { SqlDatabase } from '../src/db/database.js'
import { runMigrations } from '../src/db/migrate.js'
import { openPg } from '../src/db/postgres.js'
import { buildApp, type App, type AppDeps } from '../src/http/app.js'
import { createPgDatabase, dropPgDatabase } from './postgres/database.js'

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789'

/**
 * The database the service tests run on: SQLite, or PostgreSQL when GOALKEEPER_TEST_BACKEND=postgres
 * (vitest.config.ts runs the service and HTTP suites once on each).
 */
export const backend: 'sqlite' | 'postgres' = process.env.GOALKEEPER_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite'

export interface TestAgent {
  id: string
  apiKey: string
  headers: { authorization: string }
}

export interface TestApp {
  app: App
  handle: DbHandle
  /** The app's database, either dialect. */
  db: SqlDatabase
  /** The raw SQLite connection, for tests about SQLite itself; throws on PostgreSQL. */
  readonly sqlite: Database.Database
  adminToken: string
  adminHeaders: { authorization: string }
  createAgent(name?: string): Promise<TestAgent>
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

export interface TestAppOverrides extends Partial<Omit<AppDeps, 'config'>> {
  /** Environment variables on top of the test defaults (admin token set, rate limit off). */
  env?: Record<string, string | undefined>
  /** Skip migrations (readiness tests). */
  migrate?: boolean
}

/**
 * A fresh, migrated database of the run's backend, closed (and on PostgreSQL dropped) after the
 * test: `:memory:` SQLite, or a new database in the run's PostgreSQL cluster.
 */
export async function openTestDatabase(options: { migrate?: boolean } = {}): Promise<DbHandle> {
  const migrate = options.migrate ?? true
  if (backend === 'postgres') {
    const url = await createPgDatabase({ migrated: migrate })
    const handle = openPg(url, { max: 4 })
    cleanups.push(async () => {
      await handle.close().catch(() => undefined)
      await dropPgDatabase(url)
    })
    return handle
  }
  const handle = openDb(':memory:')
  if (migrate) runMigrations(handle)
  cleanups.push(() => handle.close())
  return handle
}

/** The raw SQLite connection under a handle, for tests about SQLite itself. */
export function sqliteOf(handle: DbHandle): Database.Database {
  if (!('sqlite' in handle)) throw new Error('This test reads SQLite directly; it cannot run on PostgreSQL.')
  return (handle as DbHandle & { sqlite: Database.Database }).sqlite
}

/** A fresh app on a fresh database (openTestDatabase), logger off, closed after the test. */
export async function buildTestApp(overrides: TestAppOverrides = {}): Promise<TestApp> {
  const { env, migrate = true, ...deps } = overrides
  const config: Config = loadConfig({
    GOALKEEPER_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0',
    GOALKEEPER_DB: ':memory:',
    ...env,
  })
  const handle = deps.handle ?? (await openTestDatabase({ migrate }))
  // A handle the test opened itself is closed after the test too.
  if (deps.handle !== undefined) cleanups.push(() => deps.handle!.close().catch(() => undefined))
  const app = await buildApp({ logger: false, ...deps, config, handle })
  // Closed before its database (cleanups run in order, and this one is added last).
  cleanups.unshift(() => app.close().then(() => undefined))
  const adminToken = config.adminToken ?? ''
  const adminHeaders = { authorization: `Bearer ${adminToken}` }
  return {
    app,
    handle,
    db: handle.db,
    get sqlite() {
      return sqliteOf(handle)
    },
    adminToken,
    adminHeaders,
    async createAgent(name = 'agent') {
      const { id, api_key } = await app.services.agents.create(name)
      return { id, apiKey: api_key, headers: { authorization: `Bearer ${api_key}` } }
    },
  }
}

/**
 * Subscribes `agentId` to every event with a webhook row (no dispatcher runs in these tests, so
 * nothing is sent): the outbox stores a message only when some subscription wants it.
 */
export async function subscribeToEvents(db: SqlDatabase, agentId: string): Promise<void> {
  await db.run("INSERT INTO webhooks (id, agent_id, url, secret, created_at, updated_at) VALUES (?, ?, 'http://127.0.0.1:9/hook', 'whsec_dGVzdA==', 0, 0)", [`wh_${agentId}`, agentId])
}
