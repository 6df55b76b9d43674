/**
 * Figures for reminders (not a timed test): `npm run bench:reminders`.
 * - search: 100,000 reminders of one agent (plus 20,000 of other agents sharing the FTS index),
 *   two-word queries from the same vocabulary, in-process `ReminderSearch.search` calls.
 * - turn start: 1,000 reminders for the agent (mostly future scheduled / recurring, 150 context
 *   triggers, ~20 due), in-process `TurnsService.start` calls; each turn runs inside a
 *   transaction rolled back afterwards so every iteration sees the same state (the rollback is
 *   inside the timing).
 * - turn start with a session: the same, plus a session's goal reminder and recitation.
 * Targets: search p50 ≤ 2 ms and p99 ≤ 10 ms; turn start p99 ≤ 10 ms. The machine is shared, so
 * expect noise; percentiles are over many iterations.
 */
import { openDb } from '../src/db/client.js'
import { runMigrations } from '../src/db/migrate.js'
import { newId } from '../src/ids.js'
import type { ReminderRow } from '../src/reminders/model.js'
import { ReminderSearch } from '../src/reminders/search.js'
import { ReminderRepository } from '../src/reminders/repository.js'
import { RemindersService } from '../src/reminders/service.js'
import { SessionsService } from '../src/sessions/service.js'
import { SettingsService } from '../src/reminders/settings.js'
import { createMetrics } from '../src/metrics.js'
import { TurnsService } from '../src/reminders/turns.js'

// Deterministic PRNG (mulberry32) so runs compare.
let seed = 42
function rand(): number {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const SYL = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'shi', 'den', 'pra', 'gul', 'fen', 'bor', 'qua', 'zed', 'lin']
const VOCAB = Array.from({ length: 20_000 }, (_, i) => {
  let w = ''
  let n = i + 17
  for (let k = 0; k < 3; k++) {
    w += SYL[n % SYL.length]
    n = Math.floor(n / SYL.length) + k * 7
  }
  return `${w}${i}`
})
// Zipf (s = 1) over content words: rank r has weight 1 / (r + 100), the offset standing for the
// ~100 stop words above them that search leaves out. The most common word is then in ~3% of rows.
const CUMULATIVE = (() => {
  const out = new Float64Array(VOCAB.length)
  let sum = 0
  for (let r = 0; r < VOCAB.length; r++) out[r] = sum += 1 / (r + 100)
  return out.map((c) => c / sum)
})()
function word(): string {
  const u = rand()
  let lo = 0
  let hi = CUMULATIVE.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((CUMULATIVE[mid] as number) < u) lo = mid + 1
    else hi = mid
  }
  return VOCAB[lo] as string
}
const words = (n: number) => Array.from({ length: n }, word).join(' ')

function percentiles(samples: number[]): { p50: number; p99: number; n: number } {
  const s = [...samples].sort((a, b) => a - b)
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number
  return { p50: at(0.5), p99: at(0.99), n: s.length }
}

/**
 * Wall and CPU milliseconds of one call. Other engineers' jobs share the two cores, so wall time
 * includes waiting for a core; CPU time (this process's user + system) is what the call costs.
 */
const wall: number[] = []
const cpu: number[] = []
async function timeMs(fn: () => unknown): Promise<number> {
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  await fn()
  const w = Number(process.hrtime.bigint() - t0) / 1e6
  const c = process.cpuUsage(c0)
  wall.push(w)
  cpu.push((c.user + c.system) / 1000)
  return w
}
function report(label: string, extra: string): void {
  const w = percentiles(wall)
  const c = percentiles(cpu)
  console.log(`${label}: wall p50 ${w.p50.toFixed(2)} ms, p99 ${w.p99.toFixed(2)} ms; cpu p50 ${c.p50.toFixed(2)} ms, p99 ${c.p99.toFixed(2)} ms; n=${w.n} (${extra})`)
  wall.length = 0
  cpu.length = 0
}

const NOW = Date.parse('2026-11-22T09:00:00Z')
const clock = () => NOW

function setup() {
  const h = openDb(':memory:')
  runMigrations(h)
  const settings = new SettingsService(new ReminderRepository(h.db), clock)
  const repo = new ReminderRepository(h.db)
  const reminders = new RemindersService(repo, settings, clock)
  const search = new ReminderSearch(repo)
  return { h, settings, repo, reminders, search, turns: new TurnsService({ reminders, repo, settings, search, clock }) }
}

/** Bulk load through the repository (the service's per-create quota count would dominate a 100k load). */
async function bulk(ctx: ReturnType<typeof setup>, agentId: string, n: number, make: (i: number) => Partial<ReminderRow>): Promise<void> {
  await ctx.h.db.run('INSERT INTO agents (id, name, created_at) VALUES (?, ?, 0) ON CONFLICT DO NOTHING', [agentId, agentId])
  await ctx.h.db.transaction(async () => {
    for (let i = 0; i < n; i++) {
      await ctx.repo.insert({
        id: newId('rem', NOW - n + i),
        agent_id: agentId,
        session_id: null,
        title: words(4),
        body: words(14),
        trigger_type: 'scheduled',
        trigger_at: NOW + 86_400_000 + i,
        trigger_cron: null,
        trigger_timezone: null,
        trigger_pattern: null,
        status: 'pending',
        priority: 'normal',
        context_tags: JSON.stringify([word()]),
        quiet_hours_exempt: 0,
        missed_policy: 'once',
        created_at: NOW,
        updated_at: NOW,
        triggered_at: null,
        completed_at: null,
        snooze_until: null,
        last_fired_at: null,
        next_fire_at: NOW + 86_400_000 + i,
        ...make(i),
      })
    }
  })
}

// --- search over 100k ---
{
  const ctx = setup()
  const t0 = Date.now()
  await bulk(ctx, 'agt_big', 100_000, () => ({}))
  for (let a = 0; a < 4; a++) await bulk(ctx, `agt_other${a}`, 5_000, () => ({}))
  const loadS = (Date.now() - t0) / 1000
  const queries = Array.from({ length: 3000 }, () => words(2))
  for (let i = 0; i < 300; i++) await ctx.search.search('agt_big', queries[i % queries.length] as string, 20)
  wall.length = 0
  cpu.length = 0
  let hits = 0
  for (const q of queries)
    await timeMs(async () => {
      hits += (await ctx.search.search('agt_big', q, 20)).items.length
    })
  report('search, 100,000 reminders (+20,000 of other agents), 2-word queries, limit 20', `avg ${(hits / queries.length).toFixed(1)} hits; load ${loadS.toFixed(1)} s`)
  await ctx.h.close()
}

// --- turn start with 1,000 reminders ---
{
  const ctx = setup()
  await ctx.h.db.run("INSERT INTO agents (id, name, created_at) VALUES ('agt_t', 't', 0)")
  await ctx.settings.put('agt_t', { max_reminders: 5000 })
  const patterns: string[] = []
  await bulk(ctx, 'agt_t', 1000, (i) => {
    if (i < 20) return { trigger_at: NOW - 60_000 * (i + 1), next_fire_at: NOW - 60_000 * (i + 1), priority: i % 3 ? 'normal' : 'urgent' }
    if (i < 170) {
      const p = words(2)
      patterns.push(p)
      return { trigger_type: 'context', trigger_at: null, trigger_pattern: p, next_fire_at: null }
    }
    if (i < 400) return { trigger_type: 'recurring', trigger_at: null, trigger_cron: '0 9 * * 1', next_fire_at: NOW + 3_600_000 * ((i % 50) + 1) }
    return {}
  })
  // Messages: 30 words of chatter, a third of them mentioning a context pattern.
  const messages = Array.from({ length: 2000 }, (_, i) => `${words(30)} ${i % 3 === 0 ? patterns[i % patterns.length] : ''}`)
  // Each turn rolls back, so every one of them sees the same reminders.
  const rollback = new Error('rollback')
  const rolledBack = async <T>(fn: () => Promise<T>): Promise<T> => {
    let out: T | undefined
    await ctx.h.db
      .transaction(async () => {
        out = await fn()
        throw rollback
      })
      .catch((err: unknown) => {
        if (err !== rollback) throw err
      })
    return out as T
  }
  const run = (m: string) => rolledBack(() => ctx.turns.start('agt_t', { user_message: m }))
  for (let i = 0; i < 200; i++) await run(messages[i] as string)
  wall.length = 0
  cpu.length = 0
  let delivered = 0
  for (const m of messages)
    await timeMs(async () => {
      delivered += (await run(m)).reminders.length
    })
  report('turn start, 1,000 reminders, in-process TurnsService.start', `avg ${(delivered / messages.length).toFixed(1)} reminders injected`)

  // The same turns for a session with 50 steps behind it: its goal reminder and recitation come
  // through SessionsService.turnParts (a session write inside the turn's transaction).
  const sessions = new SessionsService({ db: ctx.h.db, clock, metrics: createMetrics() })
  const sessionTurns = new TurnsService({ reminders: ctx.reminders, repo: ctx.repo, settings: ctx.settings, search: ctx.search, clock, provider: sessions })
  const sid = (await sessions.create('agt_t', { goal: 'Ship the billing service migration with tests and docs', plan: ['port the schema', 'move the endpoints', 'write tests', 'write docs'] })).id
  for (let i = 0; i < 50; i++) await sessions.step('agt_t', sid, { description: `${words(8)} step ${i}`, output: 'ok' })
  const runSession = (m: string) => rolledBack(() => sessionTurns.start('agt_t', { user_message: m, session_id: sid }))
  for (let i = 0; i < 200; i++) await runSession(messages[i] as string)
  wall.length = 0
  cpu.length = 0
  let parts = 0
  for (const m of messages)
    await timeMs(async () => {
      parts += (await runSession(m)).parts.length
    })
  report('turn start with a session, 1,000 reminders', `avg ${(parts / messages.length).toFixed(1)} parts`)
  await ctx.h.close()
}
