/**
 * Replays runs through the HTTP API (app.inject on an in-memory SQLite database), one session per
 * run, and records what each verdict said: the first step told `replan` and `abort`, the loops
 * flagged by kind, stalls and runaways.
 */
import { loadConfig } from '../src/config.js'
import { openDb } from '../src/db/client.js'
import { runMigrations } from '../src/db/migrate.js'
import { cachedTokenCount } from '../src/engine/token-fit.js'
import { buildApp } from '../src/http/app.js'
import type { Ending, Run, RunStep } from './detection-data.js'

export interface Setting {
  name: string
  /** Send the optional step fields (tool, error, tokens); false: description and output only. */
  fields: boolean
  config: Record<string, unknown>
}

interface Verdict {
  verification: { recommended_action: string; loop?: { kind: string; steps: number[] }; spend?: { runaway: boolean } }
  state: { stall_turns: number }
}

/** What one run's verdicts said. Step numbers count from 1; null: never. */
export interface RunResult {
  id: string
  ending: Ending
  steps: number
  firstReplan: number | null
  firstAbort: number | null
  /** Loops flagged (a step naming a loop when the step before named none of its kind), by kind, with the step. */
  loops: { kind: string; step: number }[]
  stalls: number
  runaways: number
  actions: Record<string, number>
  /** Requests refused (4xx), with the step number and status: real traces should all be accepted. */
  refused: string[]
}

export interface Replayer {
  replay(run: Run): Promise<RunResult>
  close(): Promise<void>
}

function stepPayload(step: RunStep, fields: boolean): Record<string, unknown> {
  const payload: Record<string, unknown> = { description: step.description, output: step.output }
  if (fields) {
    if (step.tool !== null) payload.tool = step.tool
    payload.error = step.error
    payload.tokens = cachedTokenCount(`${step.description}\n${step.output}`)
  }
  return payload
}

export async function replayer(s: Setting): Promise<Replayer> {
  const handle = openDb(':memory:')
  runMigrations(handle)
  const app = await buildApp({ config: loadConfig({ GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0', GOALKEEPER_DB: ':memory:' }), handle, logger: false })
  const { api_key } = await app.services.agents.create('bench')
  const headers = { authorization: `Bearer ${api_key}` }

  async function replay(run: Run): Promise<RunResult> {
    const r: RunResult = { id: run.id, ending: run.ending, steps: 0, firstReplan: null, firstAbort: null, loops: [], stalls: 0, runaways: 0, actions: {}, refused: [] }
    const created = await app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { goal: run.goal, config: s.config } })
    if (created.statusCode !== 201) {
      r.refused.push(`create: ${created.statusCode} ${created.body.slice(0, 200)}`)
      return r
    }
    const id = created.json<{ id: string }>().id
    let stall = 0
    let lastKind: string | null = null
    for (const step of run.steps) {
      const res = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers, payload: stepPayload(step, s.fields) })
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
      const kind = v.verification.loop?.kind ?? null
      if (kind !== null && kind !== lastKind) r.loops.push({ kind, step: n })
      lastKind = kind
      if (v.state.stall_turns >= 5 && stall < 5) r.stalls++
      stall = v.state.stall_turns
      if (v.verification.spend?.runaway === true) r.runaways++
    }
    return r
  }

  return {
    replay,
    async close() {
      await app.close()
      handle.close()
    },
  }
}
