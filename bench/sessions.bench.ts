/**
 * Sessions service on a real SQLite file (WAL): the per-step write path with the hydrated-session
 * LRU against re-parsing the snapshot every time, and the full HTTP stack in-process.
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
import { bench, report } from './harness.js'

const dir = mkdtempSync(join(tmpdir(), 'gk-bench-'))
const handle = openDb(join(dir, 'bench.db'))
runMigrations(handle)
const agent = new AgentsService(handle.sqlite, wallClock).create('bench')
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

function service(cacheMax?: number) {
  const s = new SessionsService({ sqlite: handle.sqlite, clock: wallClock, metrics: createMetrics(), ...(cacheMax === undefined ? {} : { cacheMax }) })
  const id = s.create(agent.id, { goal: GOAL, plan: PLAN }).id
  let i = 0
  // A session with some history, as in a real agent run.
  for (; i < 200; i++) void s.step(agent.id, id, { description: `${steps[i % steps.length]} (${i})` })
  return { s, id, next: () => s.step(agent.id, id, { description: `${steps[i % steps.length]} (${i++})`, output: 'ok' }) }
}

const cached = service()
const uncached = service(0)
const stepCached = bench('POST step via service (hydrated-session LRU)', cached.next, { batches: 40 })
const stepUncached = bench('POST step via service (parse + hydrate snapshot each time)', uncached.next, { batches: 40 })
bench('summary (LRU hit)', () => cached.s.summary(agent.id, cached.id), { batches: 40 })
bench('summary (hydrate each time)', () => uncached.s.summary(agent.id, uncached.id), { batches: 40 })
bench('GET session (row only)', () => cached.s.get(agent.id, cached.id), { batches: 40 })

const stepsTaken = cached.s.summary(agent.id, cached.id).verifications
const snapshot = handle.sqlite.prepare('SELECT length(snapshot) AS n FROM session_snapshots WHERE session_id = ?').get(cached.id) as { n: number }

const app = await buildApp({ config: loadConfig({ GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0', GOALKEEPER_DB: ':memory:' }), handle, logger: false })
const headers = { authorization: `Bearer ${agent.api_key}` }
const httpId = app.services.sessions.create(agent.id, { goal: GOAL, plan: PLAN }).id
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
handle.close()
rmSync(dir, { recursive: true, force: true })

report('goal sessions: step write path on a SQLite file (WAL, synchronous=NORMAL)')
console.log(`LRU speed-up on a step: ${(stepUncached.median_us / stepCached.median_us).toFixed(2)}×`)
console.log(`snapshot after ${stepsTaken} steps: ${snapshot.n} bytes (rewritten with every write)`)
console.log(`POST /v1/sessions/{id}/steps through app.inject, ${N} requests: median ${times[N >> 1]!.toFixed(0)} µs, p90 ${times[Math.floor(N * 0.9)]!.toFixed(0)} µs, p99 ${times[Math.floor(N * 0.99)]!.toFixed(0)} µs`)
