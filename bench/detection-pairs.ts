/**
 * A step's drift flag on the τ-bench airline drift pairs (`tau-bench-airline-drift/` of the bench
 * data: each agent step paired with its own goal and with another customer's): each pair a new
 * session's first step through the HTTP API, the step's `drift.severity` other than `none` counted
 * as flagged. The scorers' own separation (ROC-AUC) is bench:quality's; this is what reaches the
 * verdict's drift block, drift events and `session.drift_detected`, after the step's evidence.
 * `BENCH_SAMPLE=N`: the first N pairs. Every request must be accepted (a refusal stops the bench).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DATA } from './detection-data.js'
import { benchApp } from './detection-replay.js'

const PAIRS = join(DATA, 'tau-bench-airline-drift', 'tau-airline-bench.jsonl')

interface Pair {
  aligned: 0 | 1
  goal: string
  step_text: string
  tool_name: string | null
  tool_args: Record<string, unknown> | null
}

/** One line per similarity mode; null without the data. */
export async function driftPairLines(): Promise<string[] | null> {
  if (!existsSync(PAIRS)) return null
  const sample = process.env.BENCH_SAMPLE === undefined ? undefined : Number(process.env.BENCH_SAMPLE)
  const pairs = readFileSync(PAIRS, 'utf8')
    .trim()
    .split('\n')
    .slice(0, sample)
    .map((l) => JSON.parse(l) as Pair)
  const { app, headers, close } = await benchApp()
  const lines: string[] = []
  try {
    for (const similarity of ['lexical', 'enhanced']) {
      const flagged = [0, 0]
      const of = [0, 0]
      for (const p of pairs) {
        const created = await app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { goal: p.goal, config: { similarity } } })
        if (created.statusCode !== 201) throw new Error(`create: ${created.statusCode} ${created.body.slice(0, 200)}`)
        const id = created.json<{ id: string }>().id
        const step = { description: p.step_text, ...(p.tool_name !== null && { tool: { name: p.tool_name, args: p.tool_args ?? {} } }) }
        const res = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers, payload: step })
        if (res.statusCode !== 201) throw new Error(`step: ${res.statusCode} ${res.body.slice(0, 200)}`)
        of[p.aligned]!++
        if (res.json<{ drift: { severity: string } }>().drift.severity !== 'none') flagged[p.aligned]!++
      }
      const share = (k: 0 | 1) => `${flagged[k]}/${of[k]} (${((100 * flagged[k]!) / of[k]!).toFixed(1)} %)`
      lines.push(`${similarity}: drift flagged on steps under their own goal ${share(1)}, under another customer's ${share(0)}`)
    }
  } finally {
    await close()
  }
  return lines
}
