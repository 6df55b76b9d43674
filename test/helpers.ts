import type Database from 'better-sqlite3'
import { afterEach } from 'vitest'
import { loadConfig, type Config } from '../src/config.js'
import { openDb, type DbHandle } from '../src/db/client.js'
import { runMigrations } from '../src/db/migrate.js'
import { buildApp, type App, type AppDeps } from '../src/http/app.js'

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789'

export interface TestAgent {
  id: string
  apiKey: string
  headers: { authorization: string }
}

export interface TestApp {
  app: App
  handle: DbHandle
  adminToken: string
  adminHeaders: { authorization: string }
  createAgent(name?: string): Promise<TestAgent>
}

const open: TestApp[] = []
afterEach(async () => {
  for (const t of open.splice(0)) {
    await t.app.close()
    t.handle.close()
  }
})

export interface TestAppOverrides extends Partial<Omit<AppDeps, 'config'>> {
  /** Environment variables on top of the test defaults (admin token set, rate limit off). */
  env?: Record<string, string | undefined>
  /** Skip migrations (readiness tests). */
  migrate?: boolean
}

/** A fresh app on a migrated `:memory:` database, logger off, closed after the test. */
export async function buildTestApp(overrides: TestAppOverrides = {}): Promise<TestApp> {
  const { env, migrate = true, ...deps } = overrides
  const config: Config = loadConfig({
    GOALKEEPER_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0',
    GOALKEEPER_DB: ':memory:',
    ...env,
  })
  const handle = deps.handle ?? openDb(config.dbPath)
  if (migrate) runMigrations(handle)
  const app = await buildApp({ logger: false, ...deps, config, handle })
  const adminToken = config.adminToken ?? ''
  const adminHeaders = { authorization: `Bearer ${adminToken}` }
  const t: TestApp = {
    app,
    handle,
    adminToken,
    adminHeaders,
    async createAgent(name = 'agent') {
      const { id, api_key } = app.services.agents.create(name)
      return { id, apiKey: api_key, headers: { authorization: `Bearer ${api_key}` } }
    },
  }
  open.push(t)
  return t
}

/**
 * Subscribes `agentId` to every event with a webhook row (no dispatcher runs in these tests, so
 * nothing is sent): the outbox stores a message only when some subscription wants it.
 */
export function subscribeToEvents(sqlite: Database.Database, agentId: string): void {
  sqlite
    .prepare("INSERT INTO webhooks (id, agent_id, url, secret, created_at, updated_at) VALUES (?, ?, 'http://127.0.0.1:9/hook', 'whsec_dGVzdA==', 0, 0)")
    .run(`wh_${agentId}`, agentId)
}
