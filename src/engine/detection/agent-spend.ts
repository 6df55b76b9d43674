/**
 * An agent's daily budget: what every session of the agent spent on one day (in the agent's
 * timezone), sub-agents' sessions included, against `daily_budget` in its settings. The totals
 * are kept outside the engine (one row per agent and day, added to atomically, so replicas agree);
 * this reads a step's before and after and says what the verdict adds: a warning per threshold
 * crossed, and `abort` once the day's budget is spent, for every step that spends after that.
 */
import { budgetFraction, pct, round, thresholdsCrossed, warningLevel, type Budget } from './spend-budget.js'
import { atLeast } from './escalation.js'
import type { StepVerification } from '../session/goal-state.js'

export type DailyBudget = Budget

export interface DayTotals {
  tokens: number
  cost_usd: number
}

/** The verdict's `agent_budget`. */
export interface AgentBudgetReport extends DayTotals {
  /** The day counted, in the agent's timezone (YYYY-MM-DD). */
  day: string
  budget_fraction: number
  warning?: number
  crossed?: number[]
}

export interface AgentBudgetCheck {
  report: AgentBudgetReport
  /** The day's budget is spent (this step or an earlier one). */
  spent: boolean
  /** This step is the one that spent it. */
  newly_spent: boolean
  /** "the agent's daily budget is spent: $20.4 of $20". */
  reason: string
}

/** What a step that moved the day's totals from `before` to `after` means against `budget`; null for a budget with no limit. */
export function checkAgentBudget(budget: DailyBudget, day: string, before: DayTotals, after: DayTotals): AgentBudgetCheck | null {
  const now = budgetFraction(budget, after.tokens, after.cost_usd)
  if (now === null) return null
  const was = budgetFraction(budget, before.tokens, before.cost_usd)?.fraction ?? 0
  const report: AgentBudgetReport = { day, tokens: after.tokens, cost_usd: round(after.cost_usd), budget_fraction: round(now.fraction) }
  const level = warningLevel(budget.warn_at, now.fraction)
  if (level !== undefined) report.warning = level
  const crossed = thresholdsCrossed(budget.warn_at, was, now.fraction)
  if (crossed.length > 0) report.crossed = crossed
  const spent = now.fraction >= 1
  return { report, spent, newly_spent: spent && was < 1, reason: `${spent ? "the agent's daily budget is spent" : `the agent's daily budget is ${pct(now.fraction)} spent`}: ${now.of}` }
}

/** Adds the check to a step's verification: the report, a note on a warning, `abort` once spent. */
export function applyAgentBudget<V extends StepVerification & { agent_budget?: AgentBudgetReport }>(v: V, check: AgentBudgetCheck): void {
  v.agent_budget = check.report
  if (check.spent) v.recommended_action = atLeast(v.recommended_action, 'abort')
  if (check.spent || check.report.crossed !== undefined) v.reasoning = `${v.reasoning}; ${check.reason}`
}

/** A daily budget as stored ('{}': none). */
export function dailyBudgetOf(json: string): DailyBudget | null {
  const b = JSON.parse(json) as DailyBudget
  return b.tokens === undefined && b.cost_usd === undefined ? null : b
}

const formats = new Map<string, Intl.DateTimeFormat>()

/** The calendar day of `ms` in `timeZone` (an IANA name), as YYYY-MM-DD. */
export function dayIn(timeZone: string, ms: number): string {
  let f = formats.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
    formats.set(timeZone, f)
  }
  return f.format(ms)
}
