/**
 * Replays runs through the HTTP API (app.inject on an in-memory SQLite database), one session per
 * run, and records what each verdict said: the first step told `replan` and `abort`, the loops
 * flagged by kind, stalls and runaways.
 */
import { loadConfig } from '../src/config.js'
import { openDb } from '../src/db/client.js'
import { runMigrations } from '../src/db/migrate.js'
import { cachedTokenCount } from '../src/engine/context/token-fit.js'
import { buildApp, type App } from '../src/http/app.js'
import type { Ending, Run, RunStep } from './detection-data.js'

export interface Setting {
  name: string
  /** Send the optional step fields (tool, error, tokens); false: description and output only. */
  fields: boolean
  /** As a coding agent's hook would: the description is the call itself (a hook does not see the model's text). */
  calls?: boolean
  /**
   * Each step reports its share of the run's reported cost (`cost_usd`), and the session has the
   * run's cost cap as its budget where the data shows one (detection-data.ts).
   */
  cost?: boolean
  /**
   * Every run is given a budget it ends at this fraction of, its spend spread over its steps as
   * with `cost`: what the verdicts would say if each run had nearly spent its budget (a stress
   * check of the rules that read the budget on the runs that went well, whose cost is unknown).
   */
  endsAt?: number
  config: Record<string, unknown>
}

interface Verdict {
  verification: { recommended_action: string; loop?: { kind: string; steps: number[] }; spend?: { runaway: boolean; warning?: number }; busy_stall?: { since: number } }
  state: { stall_turns: number }
  drift: { event: unknown; drifting: boolean }
}

/** What one run's verdicts said. Step numbers count from 1; null: never. */
export interface RunResult {
  id: string
  ending: Ending
  steps: number
  firstReplan: number | null
  firstAbort: number | null
  /** Loops flagged, by kind, with the step: a finding that does not continue the last one of its kind (their steps do not overlap). */
  loops: { kind: string; step: number }[]
  stalls: number
  /** Busy stalls (tool calls in a row with nothing new), counted once per run of them. */
  busy: number
  runaways: number
  actions: Record<string, number>
  /** Requests refused (4xx), with the step number and status: real traces should all be accepted. */
  refused: string[]
  /** The first step whose budget warning reached each threshold (a setting with `cost`). */
  budgetWarned: Record<string, number>
  /** Steps that wrote a drift event. */
  driftEvents: number
  /** Sustained drift began at some step (`session.drift_detected`). */
  sustainedDrift: boolean
}

export interface Replayer {
  replay(run: Run): Promise<RunResult>
  close(): Promise<void>
}

/**
 * A run's reported cost over its steps: each LLM call sends the whole context so far, so step i
 * costs in proportion to the goal's and the earlier steps' tokens (plus its own).
 */
function stepCosts(run: Run, tokens: number[], total: number): number[] {
  let context = cachedTokenCount(run.goal)
  const weights = tokens.map((t) => (context += t))
  const sum = weights.reduce((a, b) => a + b, 0)
  return weights.map((w) => (total * w) / sum)
}

function stepPayload(step: RunStep, s: Setting): Record<string, unknown> {
  const description = s.calls === true && step.tool !== null ? `${step.tool.name} ${JSON.stringify(step.tool.args)}` : step.description
  const payload: Record<string, unknown> = { description, output: step.output }
  if (s.fields) {
    if (step.tool !== null) payload.tool = step.tool
    payload.error = step.error
    payload.tokens = cachedTokenCount(`${step.description}\n${step.output}`)
  }
  return payload
}

/** The service in process on an in-memory database, rate limit off, with one agent's headers. */
export async function benchApp(): Promise<{ app: App; headers: Record<string, string>; close: () => Promise<void> }> {
  const handle = openDb(':memory:')
  runMigrations(handle)
  const app = await buildApp({ config: loadConfig({ GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0', GOALKEEPER_DB: ':memory:' }), handle, logger: false })
  const { api_key } = await app.services.agents.create('bench')
  const close = async () => {
    await app.close()
    handle.close()
  }
  return { app, headers: { authorization: `Bearer ${api_key}` }, close }
}

export async function replayer(s: Setting): Promise<Replayer> {
  const { app, headers, close } = await benchApp()

  async function replay(run: Run): Promise<RunResult> {
    const r: RunResult = {
      id: run.id,
      ending: run.ending,
      steps: 0,
      firstReplan: null,
      firstAbort: null,
      loops: [],
      stalls: 0,
      busy: 0,
      runaways: 0,
      actions: {},
      refused: [],
      budgetWarned: {},
      driftEvents: 0,
      sustainedDrift: false,
    }
    const tokens = () => run.steps.map((x) => cachedTokenCount(`${x.description}\n${x.output}`))
    const costs = s.endsAt !== undefined ? stepCosts(run, tokens(), s.endsAt) : s.cost === true && run.cost !== null && run.cost > 0 ? stepCosts(run, tokens(), run.cost) : null
    const cap = s.endsAt !== undefined ? 1 : run.cap
    const config = costs !== null && cap !== null ? { ...s.config, budget: { cost_usd: cap } } : s.config
    const created = await app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { goal: run.goal, config } })
    if (created.statusCode !== 201) {
      r.refused.push(`create: ${created.statusCode} ${created.body.slice(0, 200)}`)
      return r
    }
    const id = created.json<{ id: string }>().id
    let stall = 0
    let busySince = 0
    let drifting = false
    const spans = new Map<string, number>()
    for (const [i, step] of run.steps.entries()) {
      const payload = stepPayload(step, s)
      if (costs !== null) payload.cost_usd = costs[i]
      const res = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers, payload })
      if (res.statusCode !== 201) {
        r.refused.push(`step ${r.steps + 1}: ${res.statusCode} ${res.body.slice(0, 200)}`)
        continue
      }
      const v = res.json<Verdict>()
      const n = ++r.steps
      const action = v.verification.recommended_action
      r.actions[action] = (r.actions[action] ?? 0) + 1
      if (action === 'replan') r.firstReplan ??= n
      if (action === 'abort') r.firstAbort ??= n
      const loop = v.verification.loop
      if (loop !== undefined) {
        if ((loop.steps[0] ?? n) > (spans.get(loop.kind) ?? 0)) r.loops.push({ kind: loop.kind, step: n })
        spans.set(loop.kind, n)
      }
      if (v.state.stall_turns >= 5 && stall < 5) r.stalls++
      stall = v.state.stall_turns
      const busy = v.verification.busy_stall
      if (busy !== undefined && busy.since !== busySince) r.busy++
      busySince = busy?.since ?? 0
      if (v.verification.spend?.runaway === true) r.runaways++
      if (v.drift.event !== null) r.driftEvents++
      if (v.drift.drifting && !drifting) r.sustainedDrift = true
      drifting = v.drift.drifting
      for (const t of [0.5, 0.8]) if ((v.verification.spend?.warning ?? 0) >= t) r.budgetWarned[t] ??= n
    }
    return r
  }

  return { replay, close }
}
