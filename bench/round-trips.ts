/**
 * Counts the PostgreSQL round trips of one step (`npx tsx bench/round-trips.ts`): a throwaway
 * cluster, the app on it, a session warmed up, then 100 steps through app.inject with every
 * statement the pool sends counted (BEGIN and COMMIT included).
 */
import pg from 'pg'
import { loadConfig } from '../src/config.js'
import { runPgMigrations } from '../src/db/pg-migrate.js'
import { openPg } from '../src/db/postgres.js'
import { buildApp } from '../src/http/app.js'
import { createDatabaseIn, findPgBin, startPgCluster } from '../test/postgres/cluster.js'

const cluster = await startPgCluster(findPgBin()!)
try {
  const handle = openPg(await createDatabaseIn(cluster.url, 'rt'))
  await runPgMigrations(handle)
  const app = await buildApp({ config: loadConfig({ GOALKEEPER_ADMIN_TOKEN: 'round-trips-admin-0123456789', GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0' }), handle, logger: false })
  const admin = { authorization: 'Bearer round-trips-admin-0123456789' }
  const key = (await app.inject({ method: 'POST', url: '/v1/agents', headers: admin, payload: { name: 'rt' } })).json().api_key as string
  const headers = { authorization: `Bearer ${key}` }
  const session = (await app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { goal: 'Build a REST API for user management', plan: ['schema', 'auth', 'tests'] } })).json().id as string
  const step = (i: number) => app.inject({ method: 'POST', url: `/v1/sessions/${session}/steps`, headers, payload: { description: `implement the auth endpoint part ${i}`, output: 'ok' } })
  for (let i = 0; i < 5; i++) await step(i)
  const counts = new Map<string, number>()
  const original = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text
    const head = text.replace(/\s+/g, ' ').slice(0, 70)
    counts.set(head, (counts.get(head) ?? 0) + 1)
    return (original as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof original
  const n = 100
  for (let i = 0; i < n; i++) await step(i + 5)
  pg.Client.prototype.query = original
  const total = [...counts.values()].reduce((a, b) => a + b, 0)
  console.log(`round trips per step: ${(total / n).toFixed(2)}`)
  for (const [text, count] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${(count / n).toFixed(2)}  ${text}`)
  await app.close()
  await handle.close()
} finally {
  cluster.stop()
}
