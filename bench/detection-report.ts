/**
 * bench:detection's figures per data file: false alarms on runs that went well beside early
 * warnings on runs that ran out of budget, and both at equal step counts.
 */
import type { RunResult } from './detection-replay.js'

/** A warning is early when it comes before the run's last fifth of steps. */
export const EARLY_SHARE = 0.8

export interface FileFigures {
  file: string
  well: number
  wellSteps: number
  /** Loop flags per kind on runs that went well. */
  wellLoops: Record<string, number>
  wellStalls: number
  wellBusy: number
  wellReplan: number
  wellAbort: number
  ranOut: number
  ranOutSteps: number
  ranOutLoops: number
  /** Runs that ran out told `replan` or `abort` at a step ≤ 0.8 × their length. */
  early: number
  /** The equal-step horizon H: the median early horizon of the runs that ran out (null without any). */
  horizon: number | null
  /** Runs of each kind at least H steps long, and those told `replan` or `abort` within their first H steps. */
  wellAtH: [told: number, of: number]
  ranOutAtH: [told: number, of: number]
  actions: Record<string, number>
  refused: string[]
  /** Drift events on the steps of runs that went well, and those runs in which sustained drift began (`session.drift_detected`). */
  wellDriftEvents: number
  wellSustainedDrift: number
  /** Per budget-warning threshold (0.5, 0.8): runs that went well warned at all; runs that ran out warned early; those told replan/abort or warned early. */
  budget: Record<string, { well: number; ranOutEarly: number; eitherEarly: number }>
}

const firstWarning = (r: RunResult) => Math.min(r.firstReplan ?? Infinity, r.firstAbort ?? Infinity)

function atHorizon(rs: RunResult[], h: number): [number, number] {
  const long = rs.filter((r) => r.steps >= h)
  return [long.filter((r) => firstWarning(r) <= h).length, long.length]
}

export function figures(file: string, results: RunResult[]): FileFigures {
  const well = results.filter((r) => r.ending === 'well')
  const out = results.filter((r) => r.ending === 'ran_out')
  const horizons = out.map((r) => Math.floor(EARLY_SHARE * r.steps)).sort((a, b) => a - b)
  const horizon = horizons.length === 0 ? null : horizons[Math.floor(horizons.length / 2)]!
  const wellLoops: Record<string, number> = {}
  for (const r of well) for (const l of r.loops) wellLoops[l.kind] = (wellLoops[l.kind] ?? 0) + 1
  const actions: Record<string, number> = {}
  for (const r of results) for (const [a, n] of Object.entries(r.actions)) actions[a] = (actions[a] ?? 0) + n
  return {
    file,
    well: well.length,
    wellSteps: well.reduce((n, r) => n + r.steps, 0),
    wellLoops,
    wellStalls: well.reduce((n, r) => n + r.stalls, 0),
    wellBusy: well.reduce((n, r) => n + r.busy, 0),
    wellReplan: well.filter((r) => r.firstReplan !== null).length,
    wellAbort: well.filter((r) => r.firstAbort !== null).length,
    ranOut: out.length,
    ranOutSteps: out.reduce((n, r) => n + r.steps, 0),
    ranOutLoops: out.reduce((n, r) => n + r.loops.length, 0),
    early: out.filter((r) => firstWarning(r) <= Math.floor(EARLY_SHARE * r.steps)).length,
    horizon,
    wellAtH: horizon === null ? [0, 0] : atHorizon(well, horizon),
    ranOutAtH: horizon === null ? [0, 0] : atHorizon(out, horizon),
    actions,
    refused: results.flatMap((r) => r.refused.map((x) => `${r.id} ${x}`)),
    wellDriftEvents: well.reduce((n, r) => n + r.driftEvents, 0),
    wellSustainedDrift: well.filter((r) => r.sustainedDrift).length,
    budget: Object.fromEntries(
      ['0.5', '0.8'].map((t) => {
        const early = (r: RunResult) => (r.budgetWarned[t] ?? Infinity) <= Math.floor(EARLY_SHARE * r.steps)
        return [
          t,
          {
            well: well.filter((r) => r.budgetWarned[t] !== undefined).length,
            ranOutEarly: out.filter(early).length,
            eitherEarly: out.filter((r) => early(r) || firstWarning(r) <= Math.floor(EARLY_SHARE * r.steps)).length,
          },
        ]
      }),
    ),
  }
}

/** The budget warnings' line of a file (a setting whose steps report cost), or null when none was given. */
export function budgetLine(f: FileFigures): string | null {
  const b = f.budget
  if (Object.values(b).every((x) => x.well === 0 && x.ranOutEarly === 0)) return null
  const part = (t: string) =>
    `≥${Number(t) * 100}%: went well warned ${pct(b[t]!.well, f.well)}, ran out warned early ${pct(b[t]!.ranOutEarly, f.ranOut)}, told replan/abort or warned early ${pct(b[t]!.eitherEarly, f.ranOut)}`
  return `${f.file} budget warnings ${part('0.5')}; ${part('0.8')}`
}

/** A file's drift line: what a webhook subscriber and the step log see of drift on runs that went well. */
export function driftLine(f: FileFigures): string {
  return `${f.file}: drift events ${per100(f.wellDriftEvents, f.wellSteps)} /100 steps of runs that went well; sustained drift (session.drift_detected) in ${pct(f.wellSustainedDrift, f.well)} of them`
}

const per100 = (n: number, steps: number) => (steps === 0 ? '–' : ((100 * n) / steps).toFixed(2))
const pct = (n: number, of: number) => (of === 0 ? '–' : `${n}/${of} (${((100 * n) / of).toFixed(0)}%)`)

export function table(rows: FileFigures[]): string {
  const head = ['file', 'went well', 'loops /100', 'by kind', 'stall /100', 'busy /100', 'told replan', 'told abort', 'ran out', 'early warning', 'H', 'at H: well', 'at H: ran out']
  const lines = rows.map((f) => {
    const loops = Object.values(f.wellLoops).reduce((a, b) => a + b, 0)
    const kinds = Object.entries(f.wellLoops)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')
    return [
      f.file,
      `${f.well} (${f.wellSteps} steps)`,
      per100(loops, f.wellSteps),
      kinds || '–',
      per100(f.wellStalls, f.wellSteps),
      per100(f.wellBusy, f.wellSteps),
      pct(f.wellReplan, f.well),
      pct(f.wellAbort, f.well),
      f.ranOut === 0 ? '–' : `${f.ranOut} (${per100(f.ranOutLoops, f.ranOutSteps)} loops /100)`,
      pct(f.early, f.ranOut),
      f.horizon === null ? '–' : String(f.horizon),
      f.horizon === null ? '–' : pct(...f.wellAtH),
      f.horizon === null ? '–' : pct(...f.ranOutAtH),
    ]
  })
  const all = [head, ...lines]
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i]!.length)))
  return all
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}
