/**
 * Sessions service on a real SQLite file (WAL): the per-step write path with the hydrated-session
 * LRU against re-parsing the snapshot every time, and the full HTTP stack in-process. The service
 * calls are async, so they are timed here one awaited call after another (wall time per call).
 * Run: npx tsx bench/sessions.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config.js'
import { openDb } from '../src/db/client.js'
import { runMigrations } from '../src/db/migrate.js'
import { wallClock } from '../src/engine/clock.js'
import { buildApp } from '../src/http/app.js'
import { createMetrics } from '../src/metrics.js'
import { AgentsService } from '../src/agents/service.js'
import { SessionsService } from '../src/sessions/service.js'

const dir = mkdtempSync(join(tmpdir(), 'gk-bench-'))
const handle = openDb(join(dir, 'bench.db'))
runMigrations(handle)
const agent = await new AgentsService(handle.db, wallClock).create('bench')
const GOAL = 'Build a REST API for user management with authentication, tests and documentation'
const PLAN = ['design the user schema', 'implement auth endpoints', 'add password reset', 'write tests', 'write docs']
const steps = [
  'design the user schema with email, password hash and roles',
  'implement the login endpoint issuing JWT access tokens',
  'add a password reset flow with signed expiring links',
  'browse cat pictures on reddit',
  'write integration tests for the auth endpoints',
  'refactor the error handler to return problem+json',
]

async function service(cacheMax?: number) {
  const s = new SessionsService({ db: handle.db, clock: wallClock, metrics: createMetrics(), ...(cacheMax === undefined ? {} : { cacheMax }) })
  const { id } = await s.create(agent.id, { goal: GOAL, plan: PLAN })
  let i = 0
  // A session with some history, as in a real agent run.
  for (; i < 200; i++) await s.step(agent.id, id, { description: `${steps[i % steps.length]} (${i})` })
  await handle.db.committed()
  // A step counts until its group commit, as a reply waits for it.
  const next = async () => {
    await s.step(agent.id, id, { description: `${steps[i % steps.length]} (${i++})`, output: 'ok' })
    await handle.db.committed()
  }
  return { s, id, next }
}

const rows: Array<{ op: string; 'median µs': string; 'p90 µs': string }> = []
/** Wall time of `count` awaited calls, one after another, after a warm-up: median and p90 per call, µs. */
async function timed(op: string, fn: () => Promise<unknown>, count = 2000): Promise<number> {
  for (let i = 0; i < 200; i++) await fn()
  const us: number[] = []
  for (let i = 0; i < count; i++) {
    const t0 = process.hrtime.bigint()
    await fn()
    us.push(Number(process.hrtime.bigint() - t0) / 1000)
  }
  us.sort((a, b) => a - b)
  rows.push({ op, 'median µs': us[count >> 1]!.toFixed(1), 'p90 µs': us[Math.floor(count * 0.9)]!.toFixed(1) })
  return us[count >> 1]!
}

const cached = await service()
const uncached = await service(0)
const stepCached = await timed('POST step via service (hydrated-session LRU)', cached.next)
const stepUncached = await timed('POST step via service (parse + hydrate snapshot each time)', uncached.next)
await timed('summary (LRU hit)', () => cached.s.summary(agent.id, cached.id))
await timed('summary (hydrate each time)', () => uncached.s.summary(agent.id, uncached.id))
await timed('GET session (row only)', () => cached.s.get(agent.id, cached.id))

const stepsTaken = (await cached.s.summary(agent.id, cached.id)).verifications
const snapshot = (await handle.db.get<{ n: number }>('SELECT length(snapshot) AS n FROM session_snapshots WHERE session_id = ?', [cached.id]))!

const app = await buildApp({ config: loadConfig({ GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0', GOALKEEPER_DB: ':memory:' }), handle, logger: false })
const headers = { authorization: `Bearer ${agent.api_key}` }
const httpId = (await app.services.sessions.create(agent.id, { goal: GOAL, plan: PLAN })).id
const N = 2000
const times: number[] = []
for (let i = 0; i < N; i++) {
  const t0 = process.hrtime.bigint()
  const res = await app.inject({ method: 'POST', url: `/v1/sessions/${httpId}/steps`, headers, payload: { description: `${steps[i % steps.length]} (${i})` } })
  times.push(Number(process.hrtime.bigint() - t0) / 1000)
  if (res.statusCode !== 201) throw new Error(res.body)
}
times.sort((a, b) => a - b)
await app.close()
await handle.close()
rmSync(dir, { recursive: true, force: true })

console.log('\ngoal sessions: step write path on a SQLite file (WAL, synchronous=NORMAL, group commit)')
console.table(rows)
console.log(`LRU speed-up on a step: ${(stepUncached / stepCached).toFixed(2)}×`)
console.log(`snapshot after ${stepsTaken} steps: ${snapshot.n} bytes (rewritten with every write)`)
console.log(
  `POST /v1/sessions/{id}/steps through app.inject, ${N} requests: median ${times[N >> 1]!.toFixed(0)} µs, p90 ${times[Math.floor(N * 0.9)]!.toFixed(0)} µs, p99 ${times[Math.floor(N * 0.99)]!.toFixed(0)} µs`,
)
