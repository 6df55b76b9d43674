/**
 * Latency of the real server at fixed request rates against a same-run baseline (`npm run bench:http`).
 *
 * Two child processes on 127.0.0.1: goalkeeper (`dist/server.js`, built first as `npm start` does;
 * `--tsx` runs src/server.ts instead; a fresh SQLite file in a temp dir,
 * GOALKEEPER_RATE_LIMIT_PER_MINUTE=0, LOG_LEVEL=warn) and a bare Fastify baseline (one prepared
 * SQLite insert per POST, one bare GET). Each column is driven open loop (bench/open-loop.ts): a
 * request is due every 1/rate s and is sent then, whatever the server is doing, and its latency
 * counts from its due time. Steps go round-robin over S sessions of their own (1, 100 and 1,000 by
 * default: real users run many agents, each on its own session). At each rate the baseline runs
 * first, then each column, so a shift in the machine's speed lands between rates, not between a
 * column and its baseline.
 *
 * It prints p50 / p99 / p99.9 / max per rate and column, the server's CPU time per request (from
 * /proc: the figure to watch when profiling), and each column's capacity: the highest rate it held
 * with p99 ≤ 10 ms. A column whose p50 passed 100 ms is overloaded and runs no higher rate.
 *
 * Targets (docs/performance.md): on SQLite, 1,000 sessions at 1,000 steps/s with p99 ≤ 10 ms, and
 * every step column's capacity ≥ 0.5× the baseline's; on PostgreSQL (`--postgres`: both servers on
 * a throwaway cluster with durable commits, the baseline doing one `pg` INSERT per POST), 1,000
 * sessions at 500 steps/s with p99 ≤ 20 ms.
 *
 * Flags: --sessions 1,100,1000 --rates 250,500,…  --seconds S (per rate and column, the first
 * second a warm-up; default 6) --drift --reminder (also `POST …/drift-checks` and
 * `GET …/reminder?turn=N` over 100 sessions; the reminder against a bare GET) --postgres --tsx
 * --no-build. BENCH_CPU_PROF=dir writes a V8 CPU profile of the goalkeeper server there.
 * Any non-2xx response or connection error fails the run (exit code 1).
 */
import { loadavg } from 'node:os'
import { createDatabaseIn, startDurableCluster } from '../test/postgres/cluster.js'
import { buildDist, startBaseline, startGoalkeeper, type ChildServer } from './child-server.js'
import { createFixture, flag, flagValue, hasFlag, stepTextSource } from './load.js'
import { openLoop, quantile, type OpenLoopRequest, type OpenLoopResult } from './open-loop.js'

const list = (name: string, fallback: string) => (flagValue(name) ?? fallback).split(',').map(Number)
const SESSIONS = list('sessions', '1,100,1000')
const RATES = list('rates', '250,500,1000,1500,2000,3000,4000,6000,8000')
const SECONDS = flag('seconds', 6)
const fromSource = hasFlag('tsx')
const onPostgres = hasFlag('postgres')
/** The p99 a rate must hold to count towards a column's capacity, ms. */
const CAPACITY_P99 = 10
/** A column whose median passed this is overloaded: higher rates are skipped. */
const OVERLOADED_P50 = 100
const TARGET = onPostgres ? { sessions: 1000, rate: 500, p99: 20 } : { sessions: 1000, rate: 1000, p99: 10 }
const MIN_CAPACITY_RATIO = 0.5

interface Column {
  name: string
  server: ChildServer
  /** The baseline column this one is compared with (none for a baseline). */
  baseline?: Column
  request: (i: number) => OpenLoopRequest
  /** Sessions the column's requests go round (0 for a baseline). */
  sessions: number
  results: Map<number, OpenLoopResult & { cpuPerRequest: number }>
  overloaded: boolean
}

const column = (name: string, server: ChildServer, request: (i: number) => OpenLoopRequest, sessions = 0, baseline?: Column): Column => ({
  name,
  server,
  ...(baseline && { baseline }),
  request,
  sessions,
  results: new Map(),
  overloaded: false,
})

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1))

async function main(): Promise<void> {
  if (!fromSource && !hasFlag('no-build')) buildDist()
  console.log(`HTTP bench, open loop: ${SECONDS} s per rate and column (the first a warm-up) on ${onPostgres ? 'PostgreSQL' : 'SQLite'}; load average ${load()}`)
  const cluster = onPostgres ? await startDurableCluster() : undefined
  const baseline = await startBaseline(cluster && (await createDatabaseIn(cluster.url, 'baseline')))
  const goalkeeper = await startGoalkeeper({ fromSource, databaseUrl: cluster && (await createDatabaseIn(cluster.url, 'goalkeeper')) })
  try {
    const post = (path: string, body: unknown, headers?: Record<string, string>): OpenLoopRequest => ({ method: 'POST', path, body: JSON.stringify(body), ...(headers && { headers }) })
    const text = stepTextSource(1)
    const basePost = column(`baseline POST (1 ${onPostgres ? 'pg' : 'SQLite'} insert)`, baseline, (i) => post('/events', { description: text(), n: i }))
    const columns = [basePost]
    // Disjoint sessions per column, each made through the API, so no column warms another's cache.
    const fixture = await createFixture(goalkeeper, SESSIONS.reduce((a, b) => a + b, 0) + 100)
    const auth = { authorization: `Bearer ${fixture.apiKey}` }
    let from = 0
    for (const s of SESSIONS) {
      const ids = fixture.sessionIds.slice(from, (from += s))
      columns.push(column(`steps, ${s} session${s === 1 ? '' : 's'}`, goalkeeper, (i) => post(`/v1/sessions/${ids[i % s]}/steps`, { description: text(), output: `ok ${i}` }, auth), s, basePost))
    }
    const hundred = fixture.sessionIds.slice(from)
    if (hasFlag('drift')) {
      const action = stepTextSource(2)
      columns.push(column('drift checks, 100 sessions', goalkeeper, (i) => post(`/v1/sessions/${hundred[i % 100]}/drift-checks`, { action: action() }, auth), 100, basePost))
    }
    if (hasFlag('reminder')) {
      const baseGet = column('baseline GET', baseline, () => ({ method: 'GET', path: '/ping' }))
      // Turns 1..30 cover the full, compact and ultra-compact modes.
      columns.push(
        baseGet,
        column(
          'reminder GET, 100 sessions',
          goalkeeper,
          (i) => ({ method: 'GET', path: `/v1/sessions/${hundred[i % 100]}/reminder?turn=${(Math.floor(i / 100) % 30) + 1}`, headers: auth }),
          100,
          baseGet,
        ),
      )
    }

    // JIT and caches warm before the first measured rate: 2 s, and every session stepped once.
    for (const c of columns) await openLoop({ baseUrl: c.server.baseUrl, rate: RATES[0]!, seconds: Math.max(2, (1.2 * c.sessions) / RATES[0]!), request: c.request })
    let failed = false
    for (const rate of RATES) {
      if (columns.every((c) => c.overloaded)) break
      console.log(`\n${rate}/s (load average ${load()})`)
      for (const c of columns) {
        if (c.overloaded) continue
        const cpu0 = c.server.cpuMicros()
        const r = await openLoop({ baseUrl: c.server.baseUrl, rate, seconds: SECONDS, request: c.request })
        const result = { ...r, cpuPerRequest: (c.server.cpuMicros() - cpu0) / r.sent }
        c.results.set(rate, result)
        c.overloaded = quantile(r.latencies, 0.5) > OVERLOADED_P50
        const bad = [...r.statuses].filter(([s]) => s < 200 || s > 299)
        if (bad.length > 0) failed = true
        const q = (x: number) => ms(quantile(r.latencies, x)).padStart(6)
        console.log(
          `  ${c.name.padEnd(32)} p50 ${q(0.5)}  p99 ${q(0.99)}  p99.9 ${q(0.999)}  max ${q(1)} ms  server CPU ${result.cpuPerRequest.toFixed(0).padStart(4)} µs/req` +
            `${bad.length > 0 ? `  non-2xx: ${bad.map(([s, n]) => `${n}× ${s}`).join(', ')}` : ''}${r.maxLag > 5 ? `  generator lag ${r.maxLag.toFixed(0)} ms` : ''}${c.overloaded ? '  overloaded' : ''}`,
        )
      }
    }
    report(columns)
    if (failed) {
      console.error('FAIL: some requests got a non-2xx answer or no answer (status 0)')
      process.exitCode = 1
    }
  } finally {
    await goalkeeper.stop()
    await baseline.stop()
    cluster?.stop()
  }
}

/** The highest rate a column held with p99 ≤ CAPACITY_P99 (0 when none). */
function capacity(c: Column): number {
  let best = 0
  for (const [rate, r] of c.results) if (quantile(r.latencies, 0.99) <= CAPACITY_P99) best = Math.max(best, rate)
  return best
}

/**
 * A step column's capacity over its baseline's. When the baseline held every rate it was run at, its
 * capacity is only a lower bound, and so the ratio is an upper bound ("≤").
 */
function capacityRatio(c: Column): { ratio: number; text: string; bounded: boolean } {
  const base = capacity(c.baseline!)
  const ratio = capacity(c) / Math.max(1, base)
  const bounded = base > 0 && base === Math.max(...c.baseline!.results.keys())
  return { ratio, bounded, text: `${bounded ? '≤ ' : ''}${ratio.toFixed(2)}×` }
}

function report(columns: Column[]): void {
  console.log(`\nload average after: ${load()}`)
  const rows: Record<string, Record<string, string>> = {}
  for (const rate of RATES) {
    const row: Record<string, string> = {}
    for (const c of columns) {
      const r = c.results.get(rate)
      row[c.name] = r === undefined ? 'overloaded' : `${ms(quantile(r.latencies, 0.99))} (p50 ${ms(quantile(r.latencies, 0.5))})`
    }
    rows[`${rate}/s p99 ms`] = row
  }
  const cap: Record<string, string> = {}
  for (const c of columns) {
    const mine = capacity(c)
    cap[c.name] = c.baseline === undefined ? `${mine}/s` : `${mine}/s = ${capacityRatio(c).text}`
  }
  rows[`capacity (p99 ≤ ${CAPACITY_P99} ms)`] = cap
  console.table(rows)

  const target = columns.find((c) => c.name.startsWith(`steps, ${TARGET.sessions} sessions`))?.results.get(TARGET.rate)
  if (target !== undefined) {
    const p99 = quantile(target.latencies, 0.99)
    console.log(`target: ${TARGET.sessions} sessions at ${TARGET.rate} steps/s with p99 ≤ ${TARGET.p99} ms: p99 ${ms(p99)} ms, ${p99 <= TARGET.p99 ? 'met' : 'NOT met'}`)
  }
  if (!onPostgres) {
    for (const c of columns.filter((x) => x.name.startsWith('steps') && x.baseline !== undefined)) {
      const { ratio, text, bounded } = capacityRatio(c)
      const verdict = ratio < MIN_CAPACITY_RATIO ? 'NOT met' : bounded ? `not known: the baseline held every rate up to ${capacity(c.baseline!)}/s; add higher --rates` : 'met'
      console.log(`target: ${c.name} capacity ≥ ${MIN_CAPACITY_RATIO}× the baseline's: ${text}, ${verdict}`)
    }
  }
}

await main()
