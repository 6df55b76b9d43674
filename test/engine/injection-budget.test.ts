import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BUDGET_TRUNCATION_MARKER, InjectionBudgetManager, UNKNOWN_INJECTION_PRIORITY } from '../../src/engine/context/injection-budget.js'
import { countTokens } from '../../src/engine/similarity/text.js'

// One token per word with o200k (checked in the first test).
const W = ['apple', 'river', 'stone', 'house', 'green', 'light', 'music', 'paper', 'water', 'table']
const words = (n: number) => Array.from({ length: n }, (_, i) => W[i % W.length]).join(' ')

describe('InjectionBudgetManager (notes §1.6)', () => {
  it('has the original priorities, 5 for unknown names, and config overrides', () => {
    const m = new InjectionBudgetManager({ priorities: { recitation: 0 } })
    expect(['budget_warning', 'timeout_wrapup', 'doom_loop', 'failure_context', 'learning_context', 'exploration_nudge', 'phase_guidance'].map((n) => m.getPriority(n))).toEqual([0, 0, 1, 2, 2, 4, 4])
    expect(m.getPriority('recitation')).toBe(0)
    expect(new InjectionBudgetManager().getPriority('recitation')).toBe(3)
    expect(m.getPriority('unknown')).toBe(UNKNOWN_INJECTION_PRIORITY)
    expect(m.getPriority('reminder:42', 1)).toBe(1)
    expect(m.maxTotalTokens).toBe(1500)
    expect(countTokens(words(150))).toBe(150)
  })

  it('orders by priority, stable among equals', () => {
    const m = new InjectionBudgetManager()
    const r = m.allocate([
      { name: 'recitation', content: 'r' },
      { name: 'b', priority: 2, content: 'b' },
      { name: 'doom_loop', content: 'd' },
      { name: 'a', priority: 2, content: 'a' },
      { name: 'budget_warning', content: 'w' },
    ])
    expect(r.accepted.map((a) => a.name)).toEqual(['budget_warning', 'doom_loop', 'b', 'a', 'recitation'])
    expect(r.accepted.map((a) => a.priority)).toEqual([0, 1, 2, 2, 3])
    expect(r.dropped).toEqual([])
  })

  it('truncates the part that overflows when more than 100 tokens remain, then drops the rest', () => {
    const m = new InjectionBudgetManager({ max_total_tokens: 300 })
    const first = words(150)
    const r = m.allocate([
      { name: 'budget_warning', content: first },
      { name: 'recitation', content: words(400) },
      { name: 'phase_guidance', content: 'short' },
    ])
    const a0 = r.accepted[0]!
    const a1 = r.accepted[1]!
    expect(a0).toMatchObject({ name: 'budget_warning', truncated: false, content: first, tokens: countTokens(first) })
    expect(a1.name).toBe('recitation')
    expect(a1.truncated).toBe(true)
    expect(a1.content.endsWith(BUDGET_TRUNCATION_MARKER)).toBe(true)
    expect(a1.content).toContain('truncated')
    expect(a1.tokens).toBe(countTokens(a1.content))
    expect(a0.tokens + a1.tokens).toBeLessThanOrEqual(300)
    expect(a0.tokens + a1.tokens).toBeGreaterThan(290)
    expect(r.dropped).toEqual(['phase_guidance'])
    expect(r.stats).toEqual({
      proposed_tokens: countTokens(first) + countTokens(words(400)) + countTokens('short'),
      accepted_tokens: a0.tokens + a1.tokens,
      dropped_count: 1,
      truncated_count: 1,
    })
  })

  it('drops a part that does not fit when 100 tokens or fewer remain, but accepts later small ones', () => {
    const m = new InjectionBudgetManager({ max_total_tokens: 200 })
    const big = words(120)
    const r = m.allocate([
      { name: 'doom_loop', content: big },
      { name: 'recitation', content: words(150) },
      { name: 'phase_guidance', content: 'tiny note' },
    ])
    expect(r.dropped).toEqual(['recitation'])
    expect(r.accepted.map((a) => a.name)).toEqual(['doom_loop', 'phase_guidance'])
  })

  it('cuts a part to its own max_tokens first', () => {
    const r = new InjectionBudgetManager().allocate([{ name: 'x', content: words(300), max_tokens: 50 }])
    expect(r.accepted[0]!.tokens).toBeLessThanOrEqual(50)
    expect(r.accepted[0]!.truncated).toBe(true)
    expect(r.stats.truncated_count).toBe(1)
  })

  it('setMaxTokens changes the budget; the state round-trips', () => {
    const m = new InjectionBudgetManager({ priorities: { x: 0 } })
    m.setMaxTokens(50)
    expect(m.allocate([{ name: 'x', content: words(100) }]).dropped).toEqual(['x'])
    const copy = InjectionBudgetManager.fromJSON(JSON.parse(JSON.stringify(m.toJSON())))
    expect(copy.toJSON()).toEqual({ max_total_tokens: 50, priorities: { x: 0 } })
    expect(() => m.setMaxTokens(-1)).toThrow(RangeError)
  })

  it('property: accepted tokens never exceed the budget and are the real counts', () => {
    const proposal = fc.record({
      name: fc.constantFrom('budget_warning', 'doom_loop', 'recitation', 'goal_reminder', 'reminder', 'phase_guidance'),
      priority: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
      content: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.integer({ min: 0, max: 400 }).map(words)),
      max_tokens: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
    })
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1500 }), fc.array(proposal, { maxLength: 8 }), (budget, proposals) => {
        const r = new InjectionBudgetManager({ max_total_tokens: budget }).allocate(proposals)
        const sum = r.accepted.reduce((s, a) => s + a.tokens, 0)
        expect(sum).toBeLessThanOrEqual(budget)
        expect(r.stats.accepted_tokens).toBe(sum)
        for (const a of r.accepted) {
          expect(a.tokens).toBe(countTokens(a.content))
        }
        expect(r.accepted.length + r.dropped.length).toBe(proposals.length)
        const prios = r.accepted.map((a) => a.priority)
        expect([...prios].sort((x, y) => x - y)).toEqual(prios)
      }),
      { numRuns: 200 },
    )
  })
})
