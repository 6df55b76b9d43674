import { describe, expect, it } from 'vitest'
import { checkAgentBudget, dayIn, GoalSession } from '../../src/engine/index.js'

const GOAL = 'Rate-limit POST /login to 5 attempts per minute per IP'
const clock = () => Date.UTC(2026, 10, 27, 9)

function spend(config: Record<string, unknown>, steps: { tokens?: number; cost_usd?: number }[]) {
  const s = new GoalSession({ goal: GOAL, config }, { clock })
  return steps.map((x, i) => s.step(`rate-limit login step ${i}`, '', undefined, x))
}

describe('budget warnings', () => {
  it('each threshold (50/80/90 %) is named once, on the step that crosses it, with one event each; the action is left as it is', () => {
    const r = spend({ budget: { tokens: 1000 } }, [{ tokens: 400 }, { tokens: 100 }, { tokens: 350 }, { tokens: 100 }, { tokens: 20 }])
    expect(r.map((x) => x.verification.spend!.crossed ?? [])).toEqual([[], [0.5], [0.8], [0.9], []])
    expect(r.map((x) => x.verification.spend!.warning ?? null)).toEqual([null, 0.5, 0.8, 0.9, 0.9])
    expect(r[2]!.verification.reasoning).toContain('budget 80% spent: 850 of 1000 tokens')
    expect(r[2]!.events).toContainEqual({ type: 'budget_warning', data: { step_number: 3, threshold: 0.8, tokens: 850, cost_usd: 0, budget_fraction: 0.85 } })
    expect(r.map((x) => x.verification.recommended_action)).not.toContain('abort')
    // One step crossing two thresholds sends both; the step that spends it all still aborts.
    const jump = spend({ budget: { cost_usd: 1 } }, [{ cost_usd: 0.85 }, { cost_usd: 0.2 }])
    expect(jump[0]!.events.filter((e) => e.type === 'budget_warning').map((e) => e.data)).toMatchObject([{ threshold: 0.5 }, { threshold: 0.8 }])
    expect(jump[1]!.verification).toMatchObject({ recommended_action: 'abort', spend: { crossed: [0.9] } })
  })

  it('near misses: 49 % names nothing; a session without a budget has no warning; warn_at picks the thresholds', () => {
    expect(spend({ budget: { tokens: 1000 } }, [{ tokens: 490 }])[0]!.verification.spend).not.toHaveProperty('crossed')
    expect(spend({}, [{ tokens: 10_000 }])[0]!.verification.spend).toEqual({ tokens: 10_000, cost_usd: 0, budget_fraction: null, runaway: false })
    const custom = spend({ budget: { tokens: 100, warn_at: [0.25] } }, [{ tokens: 30 }, { tokens: 30 }])
    expect(custom.map((x) => x.verification.spend!.crossed ?? [])).toEqual([[0.25], []])
  })

  it("a step reporting tokens only is costed at usd_per_million_tokens; a step's own cost_usd (the provider's) is preferred", () => {
    const r = spend({ budget: { cost_usd: 1, usd_per_million_tokens: 3 } }, [{ tokens: 100_000 }, { tokens: 100_000, cost_usd: 0.5 }])
    expect(r.map((x) => x.verification.spend!.cost_usd)).toEqual([0.3, 0.8])
  })

  it('a budget that is not one is refused, naming the field', () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ warn_at: [0.8, 0.5] }, 'budget/warn_at/1'],
      [{ warn_at: [1] }, 'budget/warn_at/0'],
      [{ warn_at: [0] }, 'budget/warn_at/0'],
      [{ usd_per_million_tokens: 0 }, 'budget/usd_per_million_tokens'],
      [{ cost_usd: 0 }, 'budget/cost_usd'],
    ]
    for (const [budget, field] of bad) expect(() => new GoalSession({ goal: GOAL, config: { budget } }), field).toThrow(expect.objectContaining({ field }))
  })
})

describe("an agent's daily budget", () => {
  it('warns per threshold crossed between the totals before and after a step, and is spent at 100 %', () => {
    const b = { cost_usd: 10 }
    expect(checkAgentBudget(b, '2026-11-27', { tokens: 0, cost_usd: 4 }, { tokens: 0, cost_usd: 8.5 })).toMatchObject({
      report: { day: '2026-11-27', cost_usd: 8.5, budget_fraction: 0.85, warning: 0.8, crossed: [0.5, 0.8] },
      spent: false,
    })
    expect(checkAgentBudget(b, 'd', { tokens: 0, cost_usd: 9.5 }, { tokens: 0, cost_usd: 10.2 })).toMatchObject({
      spent: true,
      newly_spent: true,
      reason: "the agent's daily budget is spent: $10.2 of $10",
    })
    expect(checkAgentBudget(b, 'd', { tokens: 0, cost_usd: 10.2 }, { tokens: 0, cost_usd: 10.3 })).toMatchObject({ spent: true, newly_spent: false })
    expect(checkAgentBudget(b, 'd', { tokens: 0, cost_usd: 4.9 }, { tokens: 0, cost_usd: 4.95 })!.report).not.toHaveProperty('crossed')
    expect(checkAgentBudget({ warn_at: [0.5] }, 'd', { tokens: 0, cost_usd: 0 }, { tokens: 0, cost_usd: 1 })).toBeNull()
  })

  it("counts days in the agent's timezone", () => {
    const late = Date.UTC(2026, 10, 27, 23, 30)
    expect(dayIn('UTC', late)).toBe('2026-11-27')
    expect(dayIn('Europe/Berlin', late)).toBe('2026-11-28')
    expect(dayIn('America/Los_Angeles', Date.UTC(2026, 10, 28, 5))).toBe('2026-11-27')
  })
})
