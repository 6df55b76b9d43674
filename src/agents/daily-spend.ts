/**
 * What an agent's sessions spent per day, against the daily budget of its settings
 * (engine/detection/agent-spend.ts). A step adds its spend with one upsert that returns the day's new totals, in
 * the step's own transaction: concurrent steps, on other replicas too, each see the total their
 * own step made, so each warning threshold and the budget itself is crossed by exactly one step,
 * and a step that rolls back takes its spend with it.
 */
import type { SqlDatabase } from '../db/database.js'
import { dailyBudgetOf, dayIn, type DailyBudget, type DayTotals } from '../engine/detection/agent-spend.js'

const BUDGET = 'SELECT timezone, daily_budget FROM agent_settings WHERE agent_id = ?'
const ADD = `INSERT INTO agent_daily_spend (agent_id, day, tokens, cost_usd, updated_at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (agent_id, day) DO UPDATE SET tokens = agent_daily_spend.tokens + excluded.tokens,
    cost_usd = agent_daily_spend.cost_usd + excluded.cost_usd, updated_at = excluded.updated_at
  RETURNING tokens, cost_usd`
const TOTALS = 'SELECT tokens, cost_usd FROM agent_daily_spend WHERE agent_id = ? AND day = ?'

/** An agent's daily budget and the day it counts now. */
export interface AgentDay {
  budget: DailyBudget
  day: string
}

export class DailySpend {
  private readonly db: SqlDatabase

  constructor(db: SqlDatabase) {
    this.db = db
  }

  /** The agent's daily budget and today in its timezone, or null when it has none. */
  async budgetOf(agentId: string, nowMs: number): Promise<AgentDay | null> {
    const row = await this.db.get<{ timezone: string; daily_budget: string }>(BUDGET, [agentId])
    const budget = row === undefined ? null : dailyBudgetOf(row.daily_budget)
    return budget === null ? null : { budget, day: dayIn(row!.timezone, nowMs) }
  }

  /** Adds a step's spend to the day's totals; returns the totals before and after it. */
  async add(agentId: string, day: string, tokens: number, cost: number, nowMs: number): Promise<{ before: DayTotals; after: DayTotals }> {
    const after = (await this.db.get<{ tokens: number | string; cost_usd: number }>(ADD, [agentId, day, tokens, cost, nowMs]))!
    const totals = { tokens: Number(after.tokens), cost_usd: after.cost_usd }
    return { before: { tokens: totals.tokens - tokens, cost_usd: totals.cost_usd - cost }, after: totals }
  }

  /** The day's totals so far (zero before the first step). */
  async totals(agentId: string, day: string): Promise<DayTotals> {
    const row = await this.db.get<{ tokens: number | string; cost_usd: number }>(TOTALS, [agentId, day])
    return row === undefined ? { tokens: 0, cost_usd: 0 } : { tokens: Number(row.tokens), cost_usd: row.cost_usd }
  }
}
