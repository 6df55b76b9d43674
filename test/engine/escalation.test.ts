import { describe, expect, it } from 'vitest'
import { DRIFT_GRACE_STEPS, EscalationLadder, GoalSession, SpendTracker, UnchangedFilter, type StepSignals } from '../../src/engine/index.js'

const GOAL = 'Book the cheapest business class round trip from New York to San Francisco for the customer'
const clock = () => Date.UTC(2026, 10, 22, 9)
const fail: StepSignals = { tool: { name: 'book_reservation', args: { flight: 'HAT001' } }, error: true }
const FAIL_TEXT = 'book_reservation business round trip San Francisco'

function actions(config: Record<string, unknown>, n: number, signals: StepSignals = fail, text = FAIL_TEXT): string[] {
  const s = new GoalSession({ goal: GOAL, config }, { clock })
  return Array.from({ length: n }, () => s.step(text, 'Error: payment does not add up', undefined, signals).verification.recommended_action)
}

describe('graduated escalation', () => {
  it('a loop answers adjust with a sentence, then replan twice while it continues, then abort', () => {
    const s = new GoalSession({ goal: GOAL, config: { escalation: 'graduated' } }, { clock })
    const results = Array.from({ length: 6 }, () => s.step(FAIL_TEXT, 'Error', undefined, fail))
    expect(results.map((r) => r.verification.recommended_action)).toEqual(['continue', 'continue', 'adjust', 'replan', 'replan', 'abort'])
    expect(results[2]!.verification.reasoning).toContain(results[2]!.verification.loop!.advice)
    expect(results[2]!.verification.loop!.advice).toMatch(/^"book_reservation\(\{"flight":"HAT001"\}\)" failed 3 times in a row \(steps 1, 2, 3\)/)
  })

  it('new sessions escalate gradually and store it; the immediate table is one config value away: the loop answers replan at once and never abort', () => {
    expect(actions({}, 6)).toEqual(['continue', 'continue', 'adjust', 'replan', 'replan', 'abort'])
    expect(new GoalSession({ goal: GOAL }).config).toMatchObject({ escalation: 'graduated', alignment: 'evidence' })
    expect(actions({ escalation: 'immediate' }, 6)).toEqual(['continue', 'continue', 'replan', 'replan', 'replan', 'replan'])
  })

  it("'seed', the former name of immediate, is accepted and stored as immediate, also from a stored session", () => {
    expect(actions({ escalation: 'seed' }, 6)).toEqual(actions({ escalation: 'immediate' }, 6))
    const s = new GoalSession({ goal: GOAL, config: { escalation: 'seed' } }, { clock })
    expect(s.config.escalation).toBe('immediate')
    const json = s.toJSON()
    ;(json.config as { escalation: string }).escalation = 'seed'
    expect(GoalSession.fromJSON(json, { clock }).config.escalation).toBe('immediate')
  })

  it('a session stored without the new fields keeps the immediate table and keyword alignment when loaded', () => {
    const s = new GoalSession({ goal: GOAL, config: { escalation: 'immediate', alignment: 'keywords' } }, { clock })
    const json = s.toJSON()
    delete json.config.escalation
    delete json.config.alignment
    delete json.config.loop_kinds
    const old = GoalSession.fromJSON(json, { clock })
    expect(old.config.escalation).toBeUndefined()
    const a = Array.from({ length: 5 }, () => old.step(FAIL_TEXT, 'Error', undefined, fail).verification.recommended_action)
    expect(a).toEqual(['continue', 'continue', 'replan', 'replan', 'replan'])
  })

  it('a new loop after moving on starts again at adjust; loop/reset clears the ladder', () => {
    const s = new GoalSession({ goal: GOAL, config: { escalation: 'graduated' } }, { clock })
    const step = (sig: StepSignals, o = 'Error') => s.step(FAIL_TEXT, o, undefined, sig).verification.recommended_action
    const other: StepSignals = { tool: { name: 'search_flights', args: { to: 'SFO' } }, error: true }
    expect([step(fail), step(fail), step(fail), step(fail)]).toEqual(['continue', 'continue', 'adjust', 'replan'])
    s.resetLoop()
    expect([step(fail), step(fail), step(fail)]).toEqual(['continue', 'continue', 'adjust'])
    // Another call's loop well after the first one's last step.
    for (let i = 0; i < 3; i++) s.step('search flights to San Francisco business', `found ${i}`, undefined, { tool: { name: 'search_flights', args: { to: 'SFO', page: i } } })
    expect([step(other, 'E'), step(other, 'E'), step(other, 'E')]).toEqual(['continue', 'continue', 'adjust'])
  })

  it('sustained drift: replan, never abort unless the session asks (drift_abort), then after DRIFT_GRACE_STEPS more steps still critical', () => {
    const off = Array.from({ length: 10 }, (_, i) => `watch football highlights part ${i}`)
    const immediate = new GoalSession({ goal: GOAL, config: { escalation: 'immediate', alignment: 'keywords' } }, { clock })
    const grad = new GoalSession({ goal: GOAL, config: { escalation: 'graduated', drift_abort: true } }, { clock })
    const plain = new GoalSession({ goal: GOAL }, { clock })
    const a = off.map((d) => immediate.step(d).verification.recommended_action)
    const b = off.map((d) => grad.step(d).verification.recommended_action)
    const c = off.map((d) => plain.step(d).verification.recommended_action)
    const firstReplan = a.indexOf('replan')
    expect(a.slice(firstReplan).every((x) => x === 'replan')).toBe(true)
    expect(b.indexOf('replan')).toBe(firstReplan)
    expect(b.indexOf('abort')).toBe(firstReplan + DRIFT_GRACE_STEPS)
    expect(c.indexOf('replan')).toBe(firstReplan)
    expect(c).not.toContain('abort')
    // Before drift builds up, the immediate table's "abort when alignment < 0.3" is an adjust.
    expect(a.slice(0, firstReplan)).not.toContain('abort')
  })

  it('low alignment alone answers adjust, never abort', () => {
    const ladder = new EscalationLadder()
    expect(ladder.decide({ step: 1, loop: null, drift: 0.1, stallTurns: 0, alignment: 0.15, advanced: false, runaway: false, driftAbort: false }).action).toBe('adjust')
  })
})

describe('budget and runaway', () => {
  it('reports spend and the budget fraction; reaching the budget answers abort with the reason, once as an event', () => {
    const s = new GoalSession({ goal: GOAL, config: { budget: { tokens: 1000, cost_usd: 0.5 } } }, { clock })
    const r1 = s.step('search flights to San Francisco', 'found', undefined, { tokens: 400, cost_usd: 0.1 })
    expect(r1.verification.spend).toEqual({ tokens: 400, cost_usd: 0.1, budget_fraction: 0.4, runaway: false })
    const r2 = s.step('book business class flight to San Francisco', 'ok', undefined, { tokens: 100, cost_usd: 0.4 })
    expect(r2.verification.spend!.budget_fraction).toBe(1)
    expect(r2.verification.recommended_action).toBe('abort')
    expect(r2.verification.reasoning).toContain('budget spent: $0.5 of $0.5')
    expect(r2.events).toContainEqual({ type: 'budget_exceeded', data: { step_number: 2, tokens: 500, cost_usd: 0.5, budget_fraction: 1, reason: 'budget spent: $0.5 of $0.5' } })
    const r3 = s.step('book business class flight to San Francisco again', 'ok', undefined, { tokens: 10 })
    expect(r3.verification.recommended_action).toBe('abort')
    expect(r3.events.map((e) => e.type)).not.toContain('budget_exceeded')
  })

  it('a session without a budget or spend data reports no spend', () => {
    const s = new GoalSession({ goal: GOAL }, { clock })
    expect(s.step('search flights').verification.spend).toBeUndefined()
    expect(s.step('search more flights', '', undefined, { tokens: 10 }).verification.spend).toEqual({ tokens: 10, cost_usd: 0, budget_fraction: null, runaway: false })
  })

  it('runaway: the last 5 steps at twice the average rate while the plan stands still', () => {
    const t = new SpendTracker()
    const flags: boolean[] = []
    for (let i = 0; i < 10; i++) flags.push(t.observe(100, undefined, 0, undefined).report.runaway)
    // Spend jumps but progress continues: not a runaway.
    flags.push(t.observe(1000, undefined, 0, undefined).report.runaway)
    expect(flags.every((f) => !f)).toBe(true)
    const stalled: boolean[] = []
    for (let stall = 1; stall <= 5; stall++) stalled.push(t.observe(1000, undefined, stall, undefined).report.runaway)
    expect(stalled).toEqual([false, false, false, false, true])
    // Steady spend while stalled is not a runaway either.
    const steady = new SpendTracker()
    const s2: boolean[] = []
    for (let i = 0; i < 20; i++) s2.push(steady.observe(100, undefined, i, undefined).report.runaway)
    expect(s2.some(Boolean)).toBe(false)
  })

  it('runaway answers adjust in graduated mode and leaves the immediate action alone by default', () => {
    const stepsOf = (config: Record<string, unknown>) => {
      const s = new GoalSession({ goal: GOAL, plan: ['search flights', 'book the flight'], config }, { clock })
      const out = []
      for (let i = 0; i < 10; i++) out.push(s.step(`business class flights New York San Francisco option ${i}`, `found ${i}`, undefined, { tokens: 10 }))
      for (let i = 0; i < 5; i++) out.push(s.step('hmm', '', undefined, { tokens: 500 }))
      return out.at(-1)!
    }
    const grad = stepsOf({ escalation: 'graduated' })
    expect(grad.verification.spend!.runaway).toBe(true)
    expect(grad.verification.reasoning).toContain('runaway')
    expect(stepsOf({}).verification.spend!.runaway).toBe(true)
  })
})

describe('skip_unchanged', () => {
  it('holds back an identical block until N turns passed; a change or a turn going back lets it out', () => {
    const f = new UnchangedFilter()
    f.record('recitation', 'Goal: X', 5)
    expect(f.check('recitation', 'Goal: X', 6, 10)).toEqual({ reason: 'unchanged', last_injected_at: 5, resend_at: 15 })
    expect(f.check('recitation', 'Goal:  x', 14, 10)).not.toBeNull()
    expect(f.check('recitation', 'Goal: X', 15, 10)).toBeNull()
    expect(f.check('recitation', 'Goal: Y', 6, 10)).toBeNull()
    expect(f.check('goal_reminder', 'Goal: X', 6, 10)).toBeNull()
    expect(f.check('recitation', 'Goal: X', 2, 10)).toBeNull()
  })

  it('a session recites only when the block changed or resend_unchanged_after passed', () => {
    const s = new GoalSession({ goal: GOAL, plan: ['search flights', 'book'], config: { skip_unchanged: true, resend_unchanged_after: 3, recitation: { frequency: 1 } } }, { clock })
    const injected = (i: number) => s.injectRecitation(i, [{ role: 'user', content: 'go' }])
    expect(injected(1).injected).toBe(true)
    const second = injected(2)
    expect(second).toMatchObject({ injected: false, recitation: null, skipped: { reason: 'unchanged', last_injected_at: 1, resend_at: 4 } })
    expect(s.recitation(3)).toMatchObject({ should_inject: false, skipped: { resend_at: 4 } })
    expect(injected(4).injected).toBe(true)
    s.step('search flights to San Francisco business class', 'found HAT001')
    expect(injected(5).injected).toBe(true)
    expect(injected(6).skipped).toBeDefined()
    expect(s.injectRecitation(6, [], { force: true }).injected).toBe(true)
    // Off by default: due means injected.
    const plain = new GoalSession({ goal: GOAL, config: { recitation: { frequency: 1 } } }, { clock })
    expect([1, 2, 3].map((i) => plain.injectRecitation(i, []).injected)).toEqual([true, true, true])
  })
})
