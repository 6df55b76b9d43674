/**
 * A step and the agent's daily budget: its spend charged to the agent's day in the step's own
 * transaction (agents/daily-spend.ts) and what that means to its verdict (engine/detection/agent-spend.ts),
 * with the agent's budget events; and whether the day's budget is spent (a hook's PreToolUse
 * denies, a stop is not held back).
 */
import type { SqlDatabase } from '../db/database.js'
import { DailySpend, type AgentDay } from '../agents/daily-spend.js'
import { applyAgentBudget, checkAgentBudget } from '../engine/detection/agent-spend.js'
import type { Clock } from '../engine/clock.js'
import type { StepResult } from '../engine/session/goal-session.js'
import type { EventType } from '../webhooks/outbox.js'
import type { Outcome } from './outcome.js'

export class AgentDays {
  private readonly spend: DailySpend
  private readonly clock: Clock

  constructor(db: SqlDatabase, clock: Clock) {
    this.spend = new DailySpend(db)
    this.clock = clock
  }

  /** The agent's daily budget and today in its timezone, or null when it has none. */
  budgetOf(agentId: string, nowMs: number): Promise<AgentDay | null> {
    return this.spend.budgetOf(agentId, nowMs)
  }

  /**
   * Adds a step's spend to the agent's day and what that means to its verdict: a warning per
   * threshold crossed, `abort` once the day's budget is spent; with an `agent.budget_warning` per
   * threshold and `agent.budget_exceeded` for the step that spent it.
   */
  async charge(agentId: string, sessionId: string, day: AgentDay, tokens: number, cost: number, outcome: Outcome<StepResult>): Promise<void> {
    const { before, after } = await this.spend.add(agentId, day.day, tokens, cost, this.clock())
    const check = checkAgentBudget(day.budget, day.day, before, after)
    if (check === null) return
    applyAgentBudget(outcome.result.verification, check)
    const { budget_fraction, crossed, cost_usd } = check.report
    const data = { session_id: sessionId, step_number: outcome.result.step_number, day: day.day, tokens: after.tokens, cost_usd, budget_fraction }
    outcome.agent_events = (crossed ?? []).map((threshold): [EventType, Record<string, unknown>] => ['agent.budget_warning', { ...data, threshold }])
    if (check.newly_spent) outcome.agent_events.push(['agent.budget_exceeded', { ...data, reason: check.reason }])
  }

  /** Why the agent may spend no more today (its daily budget is spent), or null. */
  async spent(agentId: string): Promise<string | null> {
    const day = await this.spend.budgetOf(agentId, this.clock())
    if (day === null) return null
    const totals = await this.spend.totals(agentId, day.day)
    const check = checkAgentBudget(day.budget, day.day, totals, totals)
    return check?.spent === true ? check.reason : null
  }
}
