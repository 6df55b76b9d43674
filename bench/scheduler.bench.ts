/**
 * Scheduler + delivery figures (`npm run bench:scheduler`); figures, not timed tests.
 *   A. 100,000 reminders stored, 10,000 due in the same second → time until all are delivered,
 *      signatures verified by a separate receiver process (standardwebhooks).
 *   B. steady 1,000 fires per minute → lateness (arrival − scheduled_for) p50 / p99.
 *   C. 1,000,000 reminders stored → RSS and the cost of a tick when nothing is due.
 * Everything runs on real components: a SQLite file, the croner ticker, undici, a receiver
 * in another process. BENCH_STEADY_SECONDS (default 60) sets the length of B.
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openDb, type SqliteHandle } from '../src/db/client.js'
import type { SqlDatabase } from '../src/db/database.js'
import { runMigrations } from '../src/db/migrate.js'
import { wallClock } from '../src/engine/clock.js'
import { Ticker } from '../src/reminders/ticker.js'
import { WebhooksService } from '../src/webhooks/service.js'
import { Dispatcher } from '../src/webhooks/dispatcher.js'
import { DEFAULT_DELIVERY_SETTINGS } from '../src/webhooks/retry-policy.js'
import { ReminderRepository } from '../src/reminders/repository.js'
import { SettingsService } from '../src/reminders/settings.js'

/** What a ticker reads reminders and the agents' settings through (the test fixtures load vitest). */
function reminderParts(db: SqlDatabase): { repo: ReminderRepository; settings: SettingsService } {
  const repo = new ReminderRepository(db)
  return { repo, settings: new SettingsService(repo, wallClock) }
}

const AGENTS = 10
const settings = { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: true }
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN
}
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`

interface Report {
  valid: number
  invalid: number
  lastAt: number
  lateness: number[]
}

async function startReceiver(): Promise<{ child: ChildProcess; port: number; ask: (m: object) => Promise<Report> }> {
  const child = fork(fileURLToPath(new URL('./scheduler-receiver.ts', import.meta.url)), { execArgv: ['--import', 'tsx'] })
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)))
  const ask = (m: object) =>
    new Promise<Report>((resolve) => {
      child.once('message', (r) => resolve(r as Report))
      child.send({ ...m, report: true })
    })
  return { child, port, ask }
}

/** A fresh SQLite file with AGENTS agents, one webhook each pointing at the receiver. */
async function freshDb(dir: string, name: string, port: number, send: (m: object) => void): Promise<SqliteHandle> {
  const handle = openDb(join(dir, name))
  runMigrations(handle)
  const svc = new WebhooksService(handle.db, wallClock, settings)
  const secrets: Record<string, string> = {}
  for (let a = 0; a < AGENTS; a++) {
    await handle.db.run('INSERT INTO agents (id, name, created_at) VALUES (?, ?, 0)', [`agt_${a}`, `a${a}`])
    const w = await svc.create(`agt_${a}`, { url: `http://127.0.0.1:${port}/hook/${a}` })
    secrets[`/hook/${a}`] = w.secret
  }
  // insertReminders writes on the raw connection: the group-commit batch must be closed first.
  await handle.db.committed()
  send({ secrets })
  return handle
}

/** Inserts one-shot reminders straight into the table (the FTS triggers still run). */
function insertReminders(handle: SqliteHandle, count: number, atOf: (i: number) => number, offset = 0): void {
  const ins = handle.sqlite.prepare(`INSERT INTO reminders (id, doc_id, agent_id, title, body, trigger_type, trigger_at,
    status, priority, context_tags, quiet_hours_exempt, missed_policy, created_at, updated_at, next_fire_at)
    VALUES (?, ?, ?, ?, '', 'scheduled', ?, 'pending', 'normal', '[]', 0, 'once', 0, 0, ?)`)
  const chunk = 10_000
  for (let s = 0; s < count; s += chunk) {
    handle.sqlite.transaction(() => {
      for (let i = s; i < Math.min(count, s + chunk); i++) {
        const at = atOf(i)
        const n = i + offset
        ins.run(`rem_${String(n).padStart(8, '0')}`, n + 1, `agt_${n % AGENTS}`, `reminder ${n} check the build`, at, at)
      }
    })()
  }
}

/** Moves reminders inserted at offsets from 0 to offsets from `base` (ids below `below`). */
function shift(handle: SqliteHandle, base: number, below: string): void {
  handle.sqlite.prepare('UPDATE reminders SET trigger_at = trigger_at + @base, next_fire_at = next_fire_at + @base WHERE id < @below').run({ base, below })
}

async function burst(dir: string, rx: Awaited<ReturnType<typeof startReceiver>>) {
  const handle = await freshDb(dir, 'burst.db', rx.port, (m) => rx.child.send(m))
  const far = Date.now() + 86_400_000
  insertReminders(handle, 90_000, (i) => far + i * 1000, 10_000)
  insertReminders(handle, 10_000, () => 0)
  // Inserting takes a while: the burst's time is set after, in one statement, all in one second.
  const due = Math.ceil((Date.now() + 2_000) / 1000) * 1000
  shift(handle, due + 300, 'rem_0001')
  await rx.ask({ reset: true })
  const dispatcher = new Dispatcher({ db: handle.db, settings, clock: wallClock, concurrency: 64 })
  const ticker = new Ticker({ ...reminderParts(handle.db), clock: wallClock, dispatcher })
  ticker.start()
  let r: Report
  const deadline = due + 60_000
  do {
    await sleep(250)
    r = await rx.ask({})
  } while (r.valid + r.invalid < 10_000 && Date.now() < deadline)
  await ticker.stop(5_000)
  await handle.close()
  console.log(
    `A. 100,000 stored, 10,000 due in one second: ${r.valid} delivered with valid signatures (${r.invalid} invalid) ` +
      `${((r.lastAt - (due + 300)) / 1000).toFixed(2)} s after their scheduled time (target ≤ 20 s); ` +
      `lateness p50 ${pct(r.lateness, 50)} ms, p99 ${pct(r.lateness, 99)} ms`,
  )
}

async function steady(dir: string, rx: Awaited<ReturnType<typeof startReceiver>>) {
  const seconds = Number(process.env.BENCH_STEADY_SECONDS ?? 60)
  const handle = await freshDb(dir, 'steady.db', rx.port, (m) => rx.child.send(m))
  const n = Math.round((seconds * 1000) / 60) // 1,000 per minute
  insertReminders(handle, n, (i) => Math.round(i * 60 + Math.random() * 60))
  const start = Date.now() + 2_000
  shift(handle, start, 'rem_9')
  await rx.ask({ reset: true })
  const dispatcher = new Dispatcher({ db: handle.db, settings, clock: wallClock, concurrency: 64 })
  const ticker = new Ticker({ ...reminderParts(handle.db), clock: wallClock, dispatcher })
  ticker.start()
  let r: Report
  do {
    await sleep(500)
    r = await rx.ask({})
  } while (r.valid + r.invalid < n && Date.now() < start + seconds * 1000 + 30_000)
  await ticker.stop(5_000)
  await handle.close()
  console.log(
    `B. steady 1,000 fires/min for ${seconds} s: ${r.valid}/${n} delivered (${r.invalid} invalid); ` +
      `lateness p50 ${pct(r.lateness, 50)} ms, p99 ${pct(r.lateness, 99)} ms, max ${pct(r.lateness, 100)} ms (target p99 ≤ 1500 ms)`,
  )
}

async function idle(dir: string, rx: Awaited<ReturnType<typeof startReceiver>>) {
  const handle = await freshDb(dir, 'million.db', rx.port, (m) => rx.child.send(m))
  const t0 = performance.now()
  const future = Date.now() + 86_400_000
  insertReminders(handle, 1_000_000, (i) => future + i * 1000)
  const insertS = (performance.now() - t0) / 1000
  const ticker = new Ticker({ ...reminderParts(handle.db), clock: wallClock })
  const costs: number[] = []
  for (let i = 0; i < 2_000; i++) {
    const s = performance.now()
    await ticker.tick()
    costs.push(performance.now() - s)
  }
  global.gc?.()
  const rss = process.memoryUsage().rss
  await handle.close()
  console.log(
    `C. 1,000,000 stored (inserted in ${insertS.toFixed(0)} s): RSS ${mb(rss)} (target ≤ 200 MB); ` +
      `idle tick median ${(pct(costs, 50) * 1000).toFixed(0)} µs, p99 ${(pct(costs, 99) * 1000).toFixed(0)} µs (target ≤ 5 ms)`,
  )
}

const only = process.env.BENCH_ONLY
if (!only) {
  // Each scenario in its own process, so C's RSS is not inflated by A and B.
  for (const part of ['A', 'B', 'C']) {
    spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, BENCH_ONLY: part },
      stdio: 'inherit',
    })
  }
} else {
  const dir = mkdtempSync(join(tmpdir(), 'gk-bench-sched-'))
  const rx = await startReceiver()
  try {
    if (only === 'A') await burst(dir, rx)
    if (only === 'B') await steady(dir, rx)
    if (only === 'C') await idle(dir, rx)
  } finally {
    rx.child.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}
