/**
 * The runs bench:detection replays, read from third-party data that is not in the repository
 * (`BENCH_DATA`, by default `../shared/bench-data` beside the repository): the τ-bench airline
 * episodes and every file of `coding-agent-runs/`, each run in one shape with how it ended.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const DATA = process.env.BENCH_DATA ?? fileURLToPath(new URL('../../shared/bench-data', import.meta.url))
export const TAU_FILE = join(DATA, 'tau-bench-airline-episodes', 'episodes-bench.jsonl')
export const CODING_DIR = join(DATA, 'coding-agent-runs')

export interface RunStep {
  description: string
  output: string
  tool: { name: string; args: Record<string, unknown> } | null
  error: boolean
}

/**
 * `well`: the run ended on its own (submitted, finished, the session ended; τ-bench: solved);
 * `ran_out`: its harness stopped it at a step or cost budget; `other`: anything else (an early
 * exit, an unknown end, an unsolved τ-bench episode).
 */
export type Ending = 'well' | 'ran_out' | 'other'

export interface Run {
  id: string
  goal: string
  ending: Ending
  steps: RunStep[]
  /** The run's cost as its harness reported it (dollars; null: none reported). */
  cost: number | null
  /** The cost cap the run's harness had, where the data shows one (below), else null. */
  cap: number | null
}

export interface RunFile {
  name: string
  runs: Run[]
}

function jsonLines<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T)
}

interface TauEpisode {
  id: string
  reward: number
  goal: string
  steps: RunStep[]
}

interface CodingRun {
  id: string
  goal: string
  model: string
  outcome: { exit_status: string | null; budget_exhausted?: boolean; cost?: number | null }
  steps: { tool: RunStep['tool']; description: string | null; output: string | null; error: boolean }[]
}

/** How a coding run ended, from its harness's exit status (coding-agent-runs/README.md). */
export function codingEnding(o: CodingRun['outcome']): Ending {
  const status = (o.exit_status ?? '').toLowerCase()
  if (o.budget_exhausted === true || status.includes('exit_cost') || status.startsWith('max_iterations')) return 'ran_out'
  if (['submitted', 'finish', 'session_ended'].includes(status)) return 'well'
  return 'other'
}

/**
 * A step as a coding agent's harness would post it: the model's text before the action, or the
 * call itself when the model said nothing (a step's description cannot be empty).
 */
function codingStep(s: CodingRun['steps'][number]): RunStep {
  const thought = (s.description ?? '').trim()
  const call = s.tool === null ? '' : `${s.tool.name} ${JSON.stringify(s.tool.args)}`
  return { description: thought === '' ? call || '(no text)' : thought, output: s.output ?? '', tool: s.tool, error: s.error }
}

/**
 * The cost cap of each model's runs, where some ran out of it (`exit_cost`): the least such run's
 * cost, down to a half dollar (SWE-agent's runs that ran out ended between $3.00 and $3.61, its
 * GPT-4o runs between $1.50 and $1.68: caps of $3 and $1.5). A harness stops a run once it has
 * spent its cap, so that run's cost is at or just above it.
 */
function costCaps(runs: CodingRun[]): Map<string, number> {
  const caps = new Map<string, number>()
  for (const r of runs) {
    const cost = r.outcome.cost
    if (!(r.outcome.exit_status ?? '').includes('exit_cost') || typeof cost !== 'number') continue
    caps.set(r.model, Math.min(caps.get(r.model) ?? Infinity, Math.floor(cost * 2) / 2))
  }
  return caps
}

/**
 * Every data file found, τ-bench first; `sample` keeps the first N runs of each file (the files'
 * own order, fixed), or all when undefined.
 */
export function loadRunFiles(sample?: number): RunFile[] {
  const files: RunFile[] = []
  const cut = <T>(xs: T[]) => (sample === undefined ? xs : xs.slice(0, sample))
  if (existsSync(TAU_FILE)) {
    const episodes = jsonLines<TauEpisode>(TAU_FILE)
    files.push({
      name: 'tau-bench-airline',
      runs: cut(episodes).map((e) => ({ id: e.id, goal: e.goal, ending: e.reward === 1 ? 'well' : 'other', steps: e.steps, cost: null, cap: null })),
    })
  }
  if (existsSync(CODING_DIR)) {
    for (const f of readdirSync(CODING_DIR)
      .filter((n) => n.endsWith('.jsonl'))
      .sort()) {
      const runs = jsonLines<CodingRun>(join(CODING_DIR, f))
      const caps = costCaps(runs)
      files.push({
        name: f.replace(/\.jsonl$/, ''),
        runs: cut(runs).map((r) => ({
          id: r.id,
          goal: r.goal,
          ending: codingEnding(r.outcome),
          steps: r.steps.map(codingStep),
          cost: r.outcome.cost ?? null,
          cap: caps.get(r.model) ?? null,
        })),
      })
    }
  }
  return files
}
