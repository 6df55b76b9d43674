/**
 * Verdicts on real agent runs: every run of every data file replayed step by step through the
 * HTTP API (app.inject), one session per run, once per setting, and per file:
 * - false alarms on runs that went well (ended on their own; τ-bench: solved): loop flags per 100
 *   steps, by kind, stalls per 100 steps, runs told `replan` and runs told `abort` at some step;
 * - early warnings on runs that ran out of their step or cost budget (`exit_cost`,
 *   `max_iterations`, `budget_exhausted`): told `replan` or `abort` before their last 20 % of steps;
 * - the same at equal step counts: H is the median of 0.8 × length over the runs that ran out, and
 *   among runs at least H steps long, those told `replan` or `abort` within their first H steps.
 * A loop flag is a finding that does not continue the last one of its kind (their steps do not overlap).
 * Per file too: drift events per 100 steps of runs that went well, and those runs in which
 * sustained drift began (`session.drift_detected`); and, once, a step's drift flag on the τ-bench
 * airline drift pairs per similarity mode (detection-pairs.ts).
 *
 * Settings: `default` (steps with `tool`, `error` and `tokens`, the config a new session gets),
 * `hooks` (as a coding agent's hooks would post them: the call as the description, HOOK_LOOP_KINDS),
 * `immediate` (the config of a session stored before `alignment` and graduated defaults: the
 * immediate action table and keyword alignment); with BENCH_SETTINGS also `text` (description and
 * output only), `all-kinds` (every loop kind on), `same-call` (the default with `same_call` on) and
 * `cost` (the default, each step reporting its share of the run's reported cost, the session
 * budgeted at the run's cost cap where the data shows one: detection-data.ts, detection-replay.ts),
 * `cost-hooks` (the same, posted as hooks would),
 * `budgeted` (every run given a budget it ends at 90 % of, its spend spread over its steps as with
 * `cost`: a stress check of the rules that read the budget) and `budgeted-off` (the same without
 * `budget_stall`).
 * Steps: a coding step's description is the model's text before
 * the action, or the call (`Bash {"command":…}`) when it said nothing; `tokens` is the o200k count
 * of description and output (what the step added to the context).
 *
 * Data (third-party, never in the repository): `../shared/bench-data/` beside the repository, or
 * `BENCH_DATA`: `tau-bench-airline-episodes/`, `tau-bench-airline-drift/` and every file of
 * `coding-agent-runs/` (its README says what each field means). Without them the bench says so
 * and exits 0.
 * `BENCH_SAMPLE=N` replays the first N runs of each file (a fixed sample, for a quicker look);
 * `BENCH_SETTINGS=default,text` picks settings (`all`: every one); `BENCH_JSON=path` writes the
 * figures as JSON. Run: `npm run bench:detection` (every run: ~32,000 steps per setting, about a
 * minute each here).
 */
import { writeFileSync } from 'node:fs'
import { HOOK_LOOP_KINDS, NEW_SESSION_DETECTION } from '../src/engine/detection/detection-config.js'
import { DEFAULT_LOOP_KINDS, LOOP_KINDS } from '../src/engine/detection/loop-kinds.js'
import { DATA, loadRunFiles } from './detection-data.js'
import { driftPairLines } from './detection-pairs.js'
import { budgetLine, driftLine, figures, table, type FileFigures } from './detection-report.js'
import { replayer, type Setting } from './detection-replay.js'

const SETTINGS: Setting[] = [
  { name: 'default', fields: true, config: {} },
  { name: 'hooks', fields: true, calls: true, config: { loop_kinds: [...HOOK_LOOP_KINDS] } },
  { name: 'immediate', fields: true, config: { escalation: 'immediate', alignment: 'keywords', loop_kinds: [...DEFAULT_LOOP_KINDS] } },
  { name: 'text', fields: false, config: {} },
  { name: 'all-kinds', fields: true, config: { loop_kinds: [...LOOP_KINDS] } },
  { name: 'cost', fields: true, cost: true, config: {} },
  { name: 'cost-hooks', fields: true, calls: true, cost: true, config: { loop_kinds: [...HOOK_LOOP_KINDS] } },
  { name: 'budgeted', fields: true, endsAt: 0.9, config: {} },
  { name: 'budgeted-off', fields: true, endsAt: 0.9, config: { budget_stall: false } },
  { name: 'same-call', fields: true, config: { loop_kinds: [...(NEW_SESSION_DETECTION.loop_kinds ?? []), 'same_call'] } },
]
/** Run unless BENCH_SETTINGS names others (`all`: every setting). */
const USUAL = ['default', 'hooks', 'immediate']

async function main(): Promise<void> {
  const sample = process.env.BENCH_SAMPLE === undefined ? undefined : Number(process.env.BENCH_SAMPLE)
  const files = loadRunFiles(sample)
  if (files.length === 0) {
    console.log(`bench:detection skipped: no data under ${DATA} (set BENCH_DATA to the bench-data folder).`)
    return
  }
  const wanted = process.env.BENCH_SETTINGS?.split(',') ?? USUAL
  const settings = SETTINGS.filter((s) => wanted.includes('all') || wanted.includes(s.name))
  console.log(`${files.map((f) => `${f.name}: ${f.runs.length} runs`).join('; ')}${sample === undefined ? '' : ` (first ${sample} of each file)`}\n`)
  const out: Record<string, FileFigures[]> = {}
  for (const s of settings) {
    const started = performance.now()
    const r = await replayer(s)
    const rows: FileFigures[] = []
    try {
      for (const f of files) {
        const results = []
        for (const run of f.runs) results.push(await r.replay(run))
        rows.push(figures(f.name, results))
      }
    } finally {
      await r.close()
    }
    out[s.name] = rows
    const steps = rows.reduce((n, f) => n + f.wellSteps + f.ranOutSteps, 0)
    console.log(`${s.name} ${JSON.stringify(s.config)}${s.fields ? '' : ', text only'} (${((performance.now() - started) / 1000).toFixed(0)} s)`)
    console.log(table(rows))
    const actions = rows.map(
      (f) =>
        `${f.file}: ${Object.entries(f.actions)
          .sort()
          .map(([a, n]) => `${a} ${n}`)
          .join(', ')}`,
    )
    console.log(`actions over all steps (every ending; ${steps} steps of runs that went well or ran out):\n  ${actions.join('\n  ')}`)
    console.log(rows.map(driftLine).join('\n'))
    const budget = rows.map(budgetLine).filter((l) => l !== null)
    if (budget.length > 0) console.log(budget.join('\n'))
    const refused = rows.flatMap((f) => f.refused)
    if (refused.length > 0) console.log(`refused (${refused.length}):\n  ${refused.slice(0, 10).join('\n  ')}`)
    console.log()
  }
  const pairs = await driftPairLines()
  if (pairs !== null) console.log(`τ-bench airline drift pairs, a step's drift flag (a new session's first step):\n  ${pairs.join('\n  ')}`)
  if (process.env.BENCH_JSON !== undefined) writeFileSync(process.env.BENCH_JSON, JSON.stringify(out, null, 2))
}

await main()
