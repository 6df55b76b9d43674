import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { GoalDNA, leastSquaresSlope, severityOf, type GoalDNAJSON } from '../../src/engine/drift/goal-dna.js'
import { createScorer } from '../../src/engine/similarity/goal-scorer.js'

const GOAL = 'Build a REST API for user management'
const T0 = Date.parse('2026-11-22T09:00:00.000Z')

function fixedClock() {
  let now = T0
  return { clock: () => now, advance: (ms: number) => (now += ms) }
}

describe('GoalDNA fingerprint and similarity', () => {
  it('exposes the goal, its content tokens and (lazily) its trigrams', () => {
    const dna = new GoalDNA(GOAL)
    expect(dna.goalText).toBe(GOAL)
    expect([...dna.tokens].sort()).toEqual(['api', 'build', 'management', 'rest', 'user'])
    expect(dna.trigrams.has('bui')).toBe(true)
    expect(dna.trigrams.has('d a')).toBe(true)
    expect(dna.trigrams.size).toBe(GOAL.length - 2) // every 3-character window of this goal is distinct
  })

  it('scores a related action above an unrelated one (the reference example)', () => {
    const dna = new GoalDNA(GOAL)
    const related = dna.similarity('Creating database migration for users')
    const unrelated = dna.similarity('Researching quantum computing papers')
    expect(related).toBeGreaterThan(unrelated)
    expect(unrelated).toBeLessThan(0.15)
    expect(dna.similarity('Implement the REST API endpoints for user management')).toBeGreaterThan(0.5)
  })

  it('returns 0.5 when there is no signal', () => {
    expect(new GoalDNA(GOAL).similarity('')).toBe(0.5)
    expect(new GoalDNA('').similarity('anything at all')).toBe(0.5)
  })

  it('defaults to its documented parameters and validates options', () => {
    const dna = new GoalDNA(GOAL)
    expect(dna.driftThreshold).toBe(0.15)
    expect(dna.consecutiveLimit).toBe(3)
    expect(dna.historySize).toBe(200)
    expect(dna.similarityMode).toBe('lexical')
    expect(() => new GoalDNA(GOAL, { driftThreshold: 2 })).toThrow(RangeError)
    expect(() => new GoalDNA(GOAL, { historySize: 0 })).toThrow(RangeError)
    expect(() => new GoalDNA(GOAL, { consecutiveLimit: -1 })).toThrow(RangeError)
    expect(() => createScorer(GOAL, 'nope' as 'lexical')).toThrow(/unknown similarity mode/)
  })
})

describe('drift checks', () => {
  it('records an event below the threshold and none at or above it', () => {
    const { clock } = fixedClock()
    const dna = new GoalDNA(GOAL, { clock })
    expect(dna.checkDrift(1, 'Implement REST API endpoints for user management')).toBeNull()
    const long = `Researching quantum computing papers ${'x'.repeat(300)}`
    const event = dna.checkDrift(2, long)
    expect(event).toEqual({
      step_number: 2,
      similarity: dna.similarity(long),
      action_text: long.slice(0, 200),
      severity: severityOf(dna.similarity(long), 0.15),
      timestamp: '2026-11-22T09:00:00.000Z',
    })
    expect(event!.action_text).toHaveLength(200)
    expect(dna.totalChecks).toBe(2)
    expect(dna.consecutiveDriftCount).toBe(1)
    expect(dna.getDriftEvents()).toEqual([event])
  })

  it('is drifting only when the consecutive count exceeds the limit; a good check resets it', () => {
    const dna = new GoalDNA(GOAL)
    const off = 'Researching quantum computing papers'
    for (let i = 1; i <= 3; i++) dna.checkDrift(i, off)
    expect(dna.consecutiveDriftCount).toBe(3)
    expect(dna.isDrifting()).toBe(false)
    dna.checkDrift(4, off)
    expect(dna.isDrifting()).toBe(true)
    dna.checkDrift(5, 'REST API user management build')
    expect(dna.consecutiveDriftCount).toBe(0)
    expect(dna.isDrifting()).toBe(false)
    for (let i = 6; i <= 10; i++) dna.checkDrift(i, off)
    expect(dna.isDrifting()).toBe(true)
    dna.resetConsecutive()
    expect(dna.isDrifting()).toBe(false)
    expect(dna.getDriftEvents()).toHaveLength(9)
  })

  it('check() answers with the API DriftCheck', () => {
    const dna = new GoalDNA(GOAL, { consecutiveLimit: 0 })
    const c = dna.check(7, 'Researching quantum computing papers')
    expect(c.similarity).toBe(dna.similarity('Researching quantum computing papers'))
    expect(c.severity).toBe(severityOf(c.similarity, 0.15))
    expect(c.drifting).toBe(true)
    expect(c.consecutive_drift_count).toBe(1)
    expect(c.event?.step_number).toBe(7)
    const ok = dna.check(8, GOAL)
    expect(ok).toEqual({ similarity: 1, severity: 'none', drifting: false, consecutive_drift_count: 0, event: null })
  })

  it('classifies severity relative to the threshold', () => {
    const t = 0.5
    expect(severityOf(0.5, t)).toBe('none')
    expect(severityOf(0.49, t)).toBe('low')
    expect(severityOf(0.35, t)).toBe('low')
    expect(severityOf(0.34, t)).toBe('moderate')
    expect(severityOf(0.2, t)).toBe('moderate')
    expect(severityOf(0.19, t)).toBe('high')
    expect(severityOf(0.1, t)).toBe('high')
    expect(severityOf(0.09, t)).toBe('critical')
    expect(severityOf(0, t)).toBe('critical')
  })

  it('keeps history and events bounded by history_size while counting every event', () => {
    const dna = new GoalDNA(GOAL, { historySize: 5 })
    for (let i = 0; i < 12; i++) dna.checkDrift(i, `quantum paper ${i}`)
    const json = dna.toJSON()
    expect(json.history).toHaveLength(5)
    expect(json.drift_events.map((e) => e.step_number)).toEqual([7, 8, 9, 10, 11])
    expect(dna.getTrend().total_drift_events).toBe(12)
    expect(dna.getSummary().drift_events).toBe(12)
  })
})

describe('trend', () => {
  const goal = 'alpha bravo charlie delta echo foxtrot'
  const rising = ['zulu yankee', 'alpha zulu', 'alpha bravo zulu', 'alpha bravo charlie', 'alpha bravo charlie delta echo']

  it('computes the least-squares slope', () => {
    expect(leastSquaresSlope([])).toBe(0)
    expect(leastSquaresSlope([0.4])).toBe(0)
    expect(leastSquaresSlope([1, 2, 3])).toBeCloseTo(1)
    expect(leastSquaresSlope([3, 1, 3, 1])).toBeCloseTo(-0.4)
  })

  it('is improving when similarity rises, worsening when it falls, stable when flat', () => {
    const up = new GoalDNA(goal)
    rising.forEach((a, i) => up.checkDrift(i, a))
    const sims = rising.map((a) => up.similarity(a))
    const trend = up.getTrend()
    expect(trend.direction).toBe('improving')
    expect(trend.trend_slope).toBeCloseTo(leastSquaresSlope(sims), 12)
    expect(trend.min_similarity).toBe(Math.min(...sims))
    expect(trend.max_similarity).toBe(Math.max(...sims))
    expect(trend.average_similarity).toBeCloseTo(sims.reduce((a, b) => a + b) / sims.length, 12)

    const down = new GoalDNA(goal)
    ;[...rising].reverse().forEach((a, i) => down.checkDrift(i, a))
    expect(down.getTrend().direction).toBe('worsening')

    const flat = new GoalDNA(goal)
    for (let i = 0; i < 6; i++) flat.checkDrift(i, 'alpha bravo')
    expect(flat.getTrend()).toMatchObject({ direction: 'stable', trend_slope: 0 })
  })

  it('looks only at the last `window` checks', () => {
    const dna = new GoalDNA(goal)
    rising.forEach((a, i) => dna.checkDrift(i, a))
    for (let i = 0; i < 3; i++) dna.checkDrift(10 + i, 'alpha bravo charlie delta echo foxtrot')
    expect(dna.getTrend(3)).toMatchObject({ direction: 'stable', min_similarity: 1, max_similarity: 1 })
    expect(dna.getTrend(8).direction).toBe('improving')
    expect(() => dna.getTrend(0)).toThrow(RangeError)
  })

  it('is stable with zeros before any check', () => {
    expect(new GoalDNA(goal).getTrend()).toEqual({
      direction: 'stable',
      average_similarity: 0,
      min_similarity: 0,
      max_similarity: 0,
      consecutive_drifts: 0,
      total_drift_events: 0,
      trend_slope: 0,
    })
  })
})

describe('summary and serialization', () => {
  it('summarizes the state', () => {
    const dna = new GoalDNA(GOAL)
    dna.checkDrift(1, 'Researching quantum computing papers')
    expect(dna.getSummary()).toEqual({
      goal: GOAL,
      similarity_mode: 'lexical',
      token_count: 5,
      trigram_count: dna.trigrams.size,
      total_checks: 1,
      drift_events: 1,
      trend_direction: 'stable',
      consecutive_drift_count: 1,
      is_drifting: false,
      drift_threshold: 0.15,
    })
  })

  it('a JSON round trip changes no later result', () => {
    const words = ['build', 'rest', 'api', 'user', 'management', 'quantum', 'papers', 'the', 'schema', 'ÜBER', '']
    const actionArb = fc.array(fc.constantFrom(...words), { maxLength: 6 }).map((w) => w.join(' '))
    fc.assert(
      fc.property(fc.array(actionArb, { maxLength: 15 }), fc.array(actionArb, { minLength: 1, maxLength: 15 }), fc.integer({ min: 1, max: 8 }), (before, after, historySize) => {
        const a = fixedClock()
        const b = fixedClock()
        const dna = new GoalDNA(GOAL, { clock: a.clock, historySize: historySize, consecutiveLimit: 2 })
        before.forEach((x, i) => dna.checkDrift(i, x))
        const json = JSON.parse(JSON.stringify(dna.toJSON())) as GoalDNAJSON
        const copy = GoalDNA.fromJSON(json, { clock: b.clock })
        expect(copy.toJSON()).toEqual(dna.toJSON())
        after.forEach((x, i) => {
          a.advance(1000)
          b.advance(1000)
          expect(copy.check(100 + i, x)).toEqual(dna.check(100 + i, x))
        })
        expect(copy.getTrend(4)).toEqual(dna.getTrend(4))
        expect(copy.getSummary()).toEqual(dna.getSummary())
        expect(copy.getDriftEvents()).toEqual(dna.getDriftEvents())
      }),
      { numRuns: 200 },
    )
  })
})

describe('GoalDNA without retained events (keepEvents: false)', () => {
  it('returns every event from check but keeps and serializes none, with the same verdicts', () => {
    const { clock } = fixedClock()
    const kept = new GoalDNA(GOAL, { clock })
    const lean = new GoalDNA(GOAL, { clock, keepEvents: false })
    const actions = ['Research quantum computing', 'Implement the REST API for users', 'Watch football highlights', 'Order lunch']
    for (const [i, a] of actions.entries()) expect(lean.check(i + 1, a)).toEqual(kept.check(i + 1, a))
    expect(kept.getDriftEvents().length).toBeGreaterThan(0)
    expect(lean.getDriftEvents()).toEqual([])
    const { drift_events, ...rest } = lean.toJSON()
    expect(drift_events).toEqual([])
    expect(rest).toEqual({ ...kept.toJSON(), drift_events: undefined, ...rest })
    expect(lean.getTrend()).toEqual(kept.getTrend())
    // Events in a stored snapshot are dropped on load, never served.
    expect(GoalDNA.fromJSON(kept.toJSON(), { clock, keepEvents: false }).getDriftEvents()).toEqual([])
  })
})
