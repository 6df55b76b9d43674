/**
 * Spend without progress: the tokens and dollars a session's steps report, the fraction of its
 * `config.budget` spent, and `runaway` when the last RUNAWAY_WINDOW steps spent at least twice the
 * session's average rate while the plan did not move (the tracker's stall counter covers them).
 */

export interface SessionBudget {
  tokens?: number
  cost_usd?: number
}

export interface SpendReport {
  tokens: number
  cost_usd: number
  /** Spent / budget, the larger over the dimensions budgeted; null without a budget. */
  budget_fraction: number | null
  runaway: boolean
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

  /** Adds one step's spend (absent = 0); `stallTurns` is the tracker's count after the step. */
  observe(tokens: number | undefined, cost: number | undefined, stallTurns: number, budget: SessionBudget | undefined): SpendStep {
    const t = tokens ?? 0
    const c = cost ?? 0
    this.tokens += t
    this.cost += c
    this.steps++
    this.recent.push([t, c])
    if (this.recent.length > RUNAWAY_WINDOW) this.recent.shift()
    const runaway = stallTurns >= RUNAWAY_WINDOW && (this.fast(0, this.tokens) || this.fast(1, this.cost))
    const fractions: [number, string][] = []
    if (budget?.tokens !== undefined) fractions.push([this.tokens / budget.tokens, `${this.tokens} of ${budget.tokens} tokens`])
    if (budget?.cost_usd !== undefined) fractions.push([this.cost / budget.cost_usd, `$${round(this.cost)} of $${budget.cost_usd}`])
    const worst = fractions.reduce<[number, string] | null>((m, f) => (m === null || f[0] > m[0] ? f : m), null)
    const over = worst !== null && worst[0] >= 1
    const newly = over && !this.exceeded
    if (over) this.exceeded = true
    return {
      report: { tokens: this.tokens, cost_usd: round(this.cost), budget_fraction: worst === null ? null : round(worst[0]), runaway },
      over_budget: over,
      newly_exceeded: newly,
      reason: over ? `budget spent: ${worst[1]}` : null,
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

/** Dollars and fractions to 6 decimals: float sums of cents must not print as 0.30000000000000004. */
function round(x: number): number {
  return Math.round(x * 1e6) / 1e6
}
