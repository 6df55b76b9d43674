import { describe, expect, it } from 'vitest'
import { DEFAULT_DRIFT_THRESHOLDS, GoalDNA, severityOf, SEVERITY_BANDS } from '../../src/engine/drift/goal-dna.js'
import { NEUTRAL_SIMILARITY } from '../../src/engine/similarity/enhanced-similarity.js'

const GOAL = 'Migrate the billing database from MySQL to PostgreSQL without downtime'
const PLAN = ['Export the schema with pgloader', 'Replay writes through the CDC stream', 'Switch the read replicas']
const STEPS = [
  'Ran pgloader against the staging MySQL billing schema',
  'Planning a birthday party playlist with upbeat songs',
  'Checked replica lag on the PostgreSQL read replicas',
  // Long enough to count as evidence: a short text sharing nothing is lifted toward neutral.
  'Browsing holiday photos from last summer and sorting the beach pictures into albums for the family',
  'Compared row counts between MySQL and PostgreSQL billing tables',
]

describe('GoalDNA with the enhanced similarity', () => {
  it('uses its own default threshold and reports the mode', () => {
    const dna = new GoalDNA(GOAL, { similarity: 'enhanced' })
    expect(dna.driftThreshold).toBe(DEFAULT_DRIFT_THRESHOLDS.enhanced)
    expect(new GoalDNA(GOAL).driftThreshold).toBe(0.15)
    expect(dna.getSummary().similarity_mode).toBe('enhanced')
  })

  it('flags off-goal steps and passes on-goal ones', () => {
    const dna = new GoalDNA(GOAL, { similarity: 'enhanced', clock: () => 0 })
    const events = STEPS.map((s, i) => dna.checkDrift(i + 1, s))
    expect(events.map((e) => e !== null)).toEqual([false, true, false, true, false])
    // The short off-goal step is weaker evidence of drift than the long one: lifted further
    // toward the neutral value. Both stay in the weakest band: sharing no word says little.
    expect(events[1]!.similarity).toBeGreaterThan(events[3]!.similarity)
    expect(events[1]?.severity).toBe('low')
    expect(events[3]?.severity).toBe('low')
  })

  it('context lets plan steps the goal never names count as on track', () => {
    const step = 'Replayed writes through the CDC stream'
    // Without the plan it shares nothing with the goal: a short text, lifted to just under the
    // neutral value (which sits above the threshold); the plan makes it clearly on track.
    const alone = new GoalDNA(GOAL, { similarity: 'enhanced' }).similarity(step)
    expect(alone).toBeLessThan(NEUTRAL_SIMILARITY)
    expect(new GoalDNA(GOAL, { similarity: 'enhanced', context: PLAN }).similarity(step)).toBeGreaterThan(alone + 0.1)
  })

  it('survives a JSON round trip exactly, context included', () => {
    const clock = () => 1_700_000_000_000
    const a = new GoalDNA(GOAL, { similarity: 'enhanced', context: PLAN, clock })
    STEPS.slice(0, 3).forEach((s, i) => a.checkDrift(i + 1, s))
    const b = GoalDNA.fromJSON(JSON.parse(JSON.stringify(a.toJSON())), { clock })
    expect(b.toJSON()).toEqual(a.toJSON())
    for (const [i, s] of [...STEPS.slice(3), 'Replayed writes through the CDC stream'].entries()) {
      expect(b.check(10 + i, s)).toEqual(a.check(10 + i, s))
    }
    expect(b.getTrend()).toEqual(a.getTrend())
    expect(b.getSummary()).toEqual(a.getSummary())
  })

  it('keeps lexical snapshots free of a context field', () => {
    expect('context' in new GoalDNA(GOAL).toJSON()).toBe(false)
  })

  it('severity bands scale with the mode threshold', () => {
    const t = DEFAULT_DRIFT_THRESHOLDS.enhanced
    const bands = SEVERITY_BANDS.enhanced
    expect(severityOf(t, t, bands)).toBe('none')
    expect(severityOf(t * 0.99, t, bands)).toBe('low')
    expect(severityOf(0, t, bands)).toBe('critical')
  })
})
