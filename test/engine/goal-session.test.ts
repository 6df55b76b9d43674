import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { GoalSession } from '../../src/engine/session/goal-session.js'

const clock = () => Date.UTC(2026, 10, 22, 9)
const GOAL = 'Build a REST API for user management with authentication'
const PLAN = ['design user schema', 'implement auth endpoints', 'write tests']
const words = ['user', 'schema', 'auth', 'endpoint', 'test', 'cat', 'reddit', 'garden', 'password', 'design', 'api', 'bread']
const phrase = fc.array(fc.constantFrom(...words), { minLength: 0, maxLength: 5 }).map((w) => w.join(' '))

type Op =
  | { kind: 'step'; description: string }
  | { kind: 'drift'; action: string }
  | { kind: 'pitfall'; text: string }
  | { kind: 'reminder'; turn: number }
  | { kind: 'recite'; iteration: number }
  | { kind: 'resetLoop' }
  | { kind: 'resetDrift' }

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: phrase.map((description) => ({ kind: 'step' as const, description })) },
  phrase.map((action) => ({ kind: 'drift' as const, action })),
  phrase.map((text) => ({ kind: 'pitfall' as const, text })),
  fc.nat(30).map((turn) => ({ kind: 'reminder' as const, turn })),
  fc.integer({ min: 1, max: 30 }).map((iteration) => ({ kind: 'recite' as const, iteration })),
  fc.constant({ kind: 'resetLoop' as const }),
  fc.constant({ kind: 'resetDrift' as const }),
)

function apply(s: GoalSession, o: Op): unknown {
  switch (o.kind) {
    case 'step':
      return s.step(o.description)
    case 'drift':
      return s.driftCheck(o.action)
    case 'pitfall':
      return s.addPitfall(o.text)
    case 'reminder':
      return s.reminder(o.turn)
    case 'recite':
      return s.injectRecitation(o.iteration, [{ role: 'user', content: 'x' }])
    case 'resetLoop':
      return s.resetLoop()
    case 'resetDrift':
      return s.resetDrift()
  }
}

describe('GoalSession', () => {
  it('a JSON round trip at any point changes no later result', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 25 }), fc.array(op, { maxLength: 15 }), (head, tail) => {
        const live = new GoalSession({ goal: GOAL, plan: PLAN }, { clock })
        for (const o of head) apply(live, o)
        const restored = GoalSession.fromJSON(JSON.parse(JSON.stringify(live.toJSON())), { clock })
        for (const o of tail) expect(apply(restored, o)).toEqual(apply(live, o))
        expect(restored.summary()).toEqual(live.summary())
        expect(restored.toJSON()).toEqual(live.toJSON())
      }),
      { numRuns: 150 },
    )
  })

  it('emits drift_detected once per episode, loop_detected once until reset, stalled once per stall', () => {
    const s = new GoalSession({ goal: GOAL, plan: PLAN, config: { consecutive_limit: 2 } }, { clock })
    const events = []
    for (let i = 0; i < 8; i++) events.push(...s.step(`bake sourdough bread batch`).events)
    const types = events.map((e) => e.type)
    expect(types.filter((t) => t === 'drift_detected')).toHaveLength(1)
    expect(types.filter((t) => t === 'loop_detected')).toHaveLength(1)
    expect(types.filter((t) => t === 'stalled')).toHaveLength(1)
    const drift = events.find((e) => e.type === 'drift_detected')!
    expect(drift.data.step_number).toBe(3)
    s.resetDrift()
    s.resetLoop()
    const more = []
    for (let i = 0; i < 3; i++) more.push(...s.step('bake sourdough bread batch').events.map((e) => e.type))
    expect(more).toEqual(['drift_detected', 'loop_detected'])
  })

  it('keeps its snapshot small: no step history, no event list, no reminder texts', () => {
    const s = new GoalSession({ goal: GOAL, plan: PLAN }, { clock })
    for (let i = 0; i < 300; i++) {
      s.step(`step ${i} about the user schema and gardening ${i % 7}`, 'x'.repeat(2000))
      s.reminder(i)
    }
    const size = JSON.stringify(s.toJSON()).length
    expect(size).toBeLessThan(40_000)
    expect(s.summary().verifications).toBe(300)
  })

  it('setGoal refingerprints and clears pitfalls, tried approaches and reminder history', () => {
    const s = new GoalSession({ goal: GOAL, plan: PLAN }, { clock })
    s.addPitfall('plaintext passwords')
    s.addTriedApproach('cookies')
    s.reminder(1)
    s.step('design user schema')
    s.setGoal('Write the quarterly sales report')
    const sum = s.summary()
    expect(sum.reminders).toMatchObject({ pitfalls_count: 0, tried_approaches_count: 0, history_size: 0, total_reminders: 1 })
    expect(sum.goal).toBe('Write the quarterly sales report')
    expect(s.plan).toEqual(PLAN)
    expect(s.state().current_step).toBe(0)
    expect(s.driftCheck('draft the quarterly sales report').result.severity).toBe('none')
  })

  it('rejects unusable configs by field', () => {
    expect(() => new GoalSession({ goal: GOAL, config: { full_cutoff: 9, compact_cutoff: 3 } })).toThrow(/compact_cutoff/)
    expect(() => new GoalSession({ goal: GOAL, config: { drift_threshold: 1.5 } })).toThrow(/drift_threshold/)
  })
})
