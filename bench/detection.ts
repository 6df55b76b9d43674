/**
 * Loop, stall and runaway flags on real agent runs: every τ-bench airline episode (108 GPT-4o
 * runs, 1,227 steps, third-party; they rarely loop) replayed step by step through the HTTP API
 * (app.inject), once per setting:
 * - `seed`: text only (description, output), default config: the service as the seed defines it;
 * - `default`: the same steps with their optional fields (tool, error, tokens), default config;
 * - `graduated`: those steps, every loop kind on, `escalation: "graduated"`.
 * Reported: loop flags (loops detected: `session.loop_detected`) per 100 steps, by kind, and the
 * steps whose verdict names a loop (a loop that goes on counts on each step); stall flags
 * (`session.stalled`, a stall reaching 5 turns); runaway flags; and how many solved episodes
 * (`reward` 1) were told `replan` or `abort` at some step. The data has no token counts: a step's
 * `tokens` is the o200k count of its description and output (what it added to the context).
 *
 * Data: `../shared/bench-data/tau-bench-airline-episodes/` relative to the repo root;
 * `BENCH_DATA=/path/to/bench-data/` overrides it. Without it the bench says so and exits 0.
 * Run: `npm run bench:detection`.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../src/config.js'
import { openDb } from '../src/db/client.js'
import { runMigrations } from '../src/db/migrate.js'
import { cachedTokenCount } from '../src/engine/token-fit.js'
import { LOOP_KINDS, type LoopKind } from '../src/engine/loops.js'
import { buildApp } from '../src/http/app.js'

const DATA = process.env.BENCH_DATA ?? fileURLToPath(new URL('../../shared/bench-data', import.meta.url))
const FILE = join(DATA, 'tau-bench-airline-episodes', 'episodes-bench.jsonl')

interface Episode {
  id: string
  reward: number
  goal: string
  steps: { kind: string; tool: { name: string; args: Record<string, unknown> } | null; description: string; output: string; error: boolean }[]
}

interface Setting {
  name: string
  fields: boolean
  config: Record<string, unknown>
}

const SETTINGS: Setting[] = [
  { name: 'seed', fields: false, config: {} },
  { name: 'default', fields: true, config: {} },
  { name: 'graduated', fields: true, config: { loop_kinds: [...LOOP_KINDS], escalation: 'graduated' } },
]

interface Verdict {
  verification: { recommended_action: string; loop?: { kind: LoopKind; steps: number[] }; spend?: { runaway: boolean } }
  state: { stall_turns: number; loop_detected: boolean }
}

interface Tally {
  steps: number
  /** Loops detected (`session.loop_detected`: the state's loop flag turning on), by the kind named. */
  loops: Record<LoopKind, number>
  /** Steps whose verdict names a loop (a detected loop continuing counts on each step). */
  loopSteps: number
  stalls: number
  runaways: number
  actions: Record<string, number>
  solved: number
  solvedReplan: number
  solvedAbort: number
  examples: string[]
}

async function run(episodes: Episode[], s: Setting): Promise<Tally> {
  const handle = openDb(':memory:')
  runMigrations(handle)
  const app = await buildApp({ config: loadConfig({ GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0', GOALKEEPER_DB: ':memory:' }), handle, logger: false })
  const { api_key } = await app.services.agents.create('bench')
  const headers = { authorization: `Bearer ${api_key}` }
  const t: Tally = {
    steps: 0, loopSteps: 0, loops: Object.fromEntries(LOOP_KINDS.map((k) => [k, 0])) as Record<LoopKind, number>, stalls: 0, runaways: 0, actions: {},
    solved: 0, solvedReplan: 0, solvedAbort: 0, examples: [],
  }
  try {
    for (const ep of episodes) {
      const created = await app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { goal: ep.goal, config: s.config } })
      if (created.statusCode !== 201) throw new Error(`create ${ep.id}: ${created.statusCode} ${created.body}`)
      const id = created.json<{ id: string }>().id
      const told = new Set<string>()
      let stall = 0
      let looping = false
      for (const step of ep.steps) {
        const payload: Record<string, unknown> = { description: step.description, output: step.output }
        if (s.fields) {
          if (step.tool !== null) payload.tool = step.tool
          payload.error = step.error
          payload.tokens = cachedTokenCount(`${step.description}\n${step.output}`)
        }
        const res = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers, payload })
        if (res.statusCode !== 201) throw new Error(`step ${ep.id}: ${res.statusCode} ${res.body}`)
        const v = res.json<Verdict>()
        t.steps++
        const action = v.verification.recommended_action
        t.actions[action] = (t.actions[action] ?? 0) + 1
        told.add(action)
        const loop = v.verification.loop
        if (loop !== undefined) t.loopSteps++
        if (v.state.loop_detected && !looping && loop !== undefined) {
          t.loops[loop.kind]++
        }
        if (loop !== undefined && t.examples.length < 8) {
          t.examples.push(`${ep.id} (reward ${ep.reward}) ${loop.kind} steps ${loop.steps.join(',')} → ${action}`)
        }
        if (v.state.stall_turns === 5 && stall < 5) t.stalls++
        stall = v.state.stall_turns
        looping = v.state.loop_detected
        if (v.verification.spend?.runaway === true) t.runaways++
      }
      if (ep.reward === 1) {
        t.solved++
        if (told.has('replan')) t.solvedReplan++
        if (told.has('abort')) t.solvedAbort++
      }
    }
  } finally {
    await app.close()
    handle.close()
  }
  return t
}

const per100 = (n: number, steps: number) => ((100 * n) / steps).toFixed(2)

async function main(): Promise<void> {
  if (!existsSync(FILE)) {
    console.log(`bench:detection skipped: ${FILE} not found (set BENCH_DATA to the bench-data folder).`)
    return
  }
  const episodes = readFileSync(FILE, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Episode)
  console.log(`τ-bench airline: ${episodes.length} episodes, ${episodes.reduce((n, e) => n + e.steps.length, 0)} steps, ${episodes.filter((e) => e.reward === 1).length} solved\n`)
  const rows: string[][] = [['setting', 'loop flags /100', ...LOOP_KINDS, 'steps naming a loop', 'stall /100', 'runaway /100', 'solved told replan', 'solved told abort', 'actions']]
  const all: [Setting, Tally][] = []
  for (const s of SETTINGS) {
    const t = await run(episodes, s)
    all.push([s, t])
    const loops = LOOP_KINDS.reduce((n, k) => n + t.loops[k], 0)
    rows.push([
      s.name,
      `${per100(loops, t.steps)} (${loops})`,
      ...LOOP_KINDS.map((k) => String(t.loops[k])),
      String(t.loopSteps),
      `${per100(t.stalls, t.steps)} (${t.stalls})`,
      `${per100(t.runaways, t.steps)} (${t.runaways})`,
      `${t.solvedReplan} of ${t.solved}`,
      `${t.solvedAbort} of ${t.solved}`,
      Object.entries(t.actions).sort().map(([a, n]) => `${a} ${n}`).join(', '),
    ])
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  '))
  for (const [s, t] of all) {
    if (t.examples.length > 0) console.log(`\n${s.name}, loop flags:\n  ${t.examples.join('\n  ')}`)
  }
}

await main()
