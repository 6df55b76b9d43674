/**
 * Spend without progress: the tokens and dollars a session's steps report, the fraction of its
 * `config.budget` spent with warnings as it crosses `warn_at` (50 / 80 / 90 % by default), and
 * `runaway` when the last RUNAWAY_WINDOW steps spent at least twice the session's average rate
 * while the plan did not move (the tracker's stall counter covers them). The same fractions and
 * warnings serve an agent's daily budget (agent-budget.ts).
 */

export interface Budget {
  tokens?: number
  cost_usd?: number
  /** Fractions of the budget whose crossing is a warning, ascending, each in (0, 1) (default DEFAULT_WARN_AT). */
  warn_at?: number[]
}

export interface SessionBudget extends Budget {
  /** Dollars per million tokens, to cost a step that reports tokens but no `cost_usd` (the provider's cost, when given, is preferred). */
  usd_per_million_tokens?: number
}

export const DEFAULT_WARN_AT: readonly number[] = [0.5, 0.8, 0.9]
export const WARN_AT_MAX = 10

export interface SpendReport {
  tokens: number
  cost_usd: number
  /** Spent / budget, the larger over the dimensions budgeted; null without a budget. */
  budget_fraction: number | null
  runaway: boolean
  /** The highest warning threshold reached so far (absent below the first, and without a budget). */
  warning?: number
  /** The warning thresholds this step crossed (absent when none). */
  crossed?: number[]
}

/** Where spend stands against a budget: the larger fraction over the dimensions budgeted and its reading ("1100 of 1000 tokens"); null without a budget. */
export function budgetFraction(budget: Budget | undefined, tokens: number, cost: number): { fraction: number; of: string } | null {
  let worst: { fraction: number; of: string } | null = null
  if (budget?.tokens !== undefined) worst = { fraction: tokens / budget.tokens, of: `${tokens} of ${budget.tokens} tokens` }
  if (budget?.cost_usd !== undefined && (worst === null || cost / budget.cost_usd > worst.fraction)) {
    worst = { fraction: cost / budget.cost_usd, of: `$${round(cost)} of $${budget.cost_usd}` }
  }
  return worst
}

/** The warning thresholds in (before, after]: those a step that moved the fraction from `before` to `after` crossed. */
export function thresholdsCrossed(warnAt: readonly number[] | undefined, before: number, after: number): number[] {
  return (warnAt ?? DEFAULT_WARN_AT).filter((t) => before < t && t <= after)
}

/** The highest threshold at or below `fraction`, or undefined. */
export function warningLevel(warnAt: readonly number[] | undefined, fraction: number): number | undefined {
  return (warnAt ?? DEFAULT_WARN_AT).filter((t) => t <= fraction).at(-1)
}

/** A step's dollars: the cost it reports (the provider's), else its tokens at the budget's price, else 0. */
export function stepCost(tokens: number | undefined, cost: number | undefined, usdPerMillion: number | undefined): number {
  if (cost !== undefined) return cost
  return tokens !== undefined && usdPerMillion !== undefined ? (tokens * usdPerMillion) / 1e6 : 0
}

/** A budget's problem (a field and why), or null: each limit > 0, warn_at ascending in (0, 1). */
export function budgetProblem(b: SessionBudget, prefix: string): [string, string] | null {
  for (const dim of ['tokens', 'cost_usd', 'usd_per_million_tokens'] as const) {
    const v = b[dim]
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v > 0)) return [`${prefix}/${dim}`, 'must be a number > 0']
  }
  const w = b.warn_at
  if (w !== undefined) {
    if (!Array.isArray(w) || w.length > WARN_AT_MAX) return [`${prefix}/warn_at`, `must be a list of at most ${WARN_AT_MAX} fractions`]
    const bad = w.findIndex((t, i) => !(typeof t === 'number' && t > 0 && t < 1) || (i > 0 && t <= w[i - 1]!))
    if (bad >= 0) return [`${prefix}/warn_at/${bad}`, 'must be a fraction in (0, 1), each above the one before']
  }
  return null
}

export interface SpendJSON {
  tokens: number
  cost_usd: number
  steps: number
  /** [tokens, cost_usd] of the last RUNAWAY_WINDOW steps, oldest first. */
  recent: [number, number][]
  exceeded: boolean
}

export const RUNAWAY_WINDOW = 5
export const RUNAWAY_RATIO = 2

export interface SpendStep {
  report: SpendReport
  /** Spent ≥ budget on some dimension. */
  over_budget: boolean
  /** The first step over budget (the `session.budget_exceeded` event). */
  newly_exceeded: boolean
  /** `over_budget`'s reason, e.g. "budget spent: 10240 of 10000 tokens". */
  reason: string | null
  /** When the step crossed a warning threshold: "budget 80% spent: $2.41 of $3". */
  warning: string | null
}

export class SpendTracker {
  private tokens = 0
  private cost = 0
  private steps = 0
  private recent: [number, number][] = []
  private exceeded = false

  /** Whether a step has brought spend to the budget. */
  get spent(): boolean {
    return this.exceeded
  }

  /** Whether any spend was reported yet (a session without spend data reports none). */
  get any(): boolean {
    return this.tokens > 0 || this.cost > 0
  }

  /**
   * Adds one step's spend (absent = 0; dollars: stepCost); `stallTurns` is the tracker's count
   * after the step.
   */
  observe(tokens: number | undefined, cost: number | undefined, stallTurns: number, budget: SessionBudget | undefined): SpendStep {
    const t = tokens ?? 0
    const c = stepCost(tokens, cost, budget?.usd_per_million_tokens)
    const before = budgetFraction(budget, this.tokens, this.cost)?.fraction ?? 0
    this.tokens += t
    this.cost += c
    this.steps++
    this.recent.push([t, c])
    if (this.recent.length > RUNAWAY_WINDOW) this.recent.shift()
    const runaway = stallTurns >= RUNAWAY_WINDOW && (this.fast(0, this.tokens) || this.fast(1, this.cost))
    const worst = budgetFraction(budget, this.tokens, this.cost)
    const over = worst !== null && worst.fraction >= 1
    const newly = over && !this.exceeded
    if (over) this.exceeded = true
    const report: SpendReport = { tokens: this.tokens, cost_usd: round(this.cost), budget_fraction: worst === null ? null : round(worst.fraction), runaway }
    if (worst !== null) {
      const level = warningLevel(budget?.warn_at, worst.fraction)
      if (level !== undefined) report.warning = level
      const crossed = thresholdsCrossed(budget?.warn_at, before, worst.fraction)
      if (crossed.length > 0) report.crossed = crossed
    }
    return {
      report,
      over_budget: over,
      newly_exceeded: newly,
      reason: over ? `budget spent: ${worst.of}` : null,
      warning: report.crossed === undefined ? null : `budget ${pct(report.crossed.at(-1)!)} spent: ${worst!.of}`,
    }
  }

  /** The last window's rate is at least RUNAWAY_RATIO × the session's average (after two windows of steps). */
  private fast(dim: 0 | 1, total: number): boolean {
    if (this.steps < 2 * RUNAWAY_WINDOW || total <= 0) return false
    const recent = this.recent.reduce((s, r) => s + r[dim], 0) / this.recent.length
    return recent >= RUNAWAY_RATIO * (total / this.steps)
  }

  toJSON(): SpendJSON {
    return { tokens: this.tokens, cost_usd: this.cost, steps: this.steps, recent: this.recent.map((r) => [r[0], r[1]]), exceeded: this.exceeded }
  }

  static fromJSON(json: SpendJSON | undefined): SpendTracker {
    const s = new SpendTracker()
    if (json !== undefined) {
      s.tokens = json.tokens
      s.cost = json.cost_usd
      s.steps = json.steps
      s.recent = json.recent.map((r) => [r[0], r[1]])
      s.exceeded = json.exceeded
    }
    return s
  }
}

/** A fraction as a percentage ("80%"). */
export function pct(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10}%`
}

/** Dollars and fractions to 6 decimals: float sums of cents must not print as 0.30000000000000004. */
export function round(x: number): number {
  return Math.round(x * 1e6) / 1e6
}
