import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { GoalTracker, HISTORY_MAX, type GoalTrackerJSON } from '../../src/engine/session/goal-tracker.js'
import { parseLlmScore } from '../../src/engine/session/llm-verify.js'
import { keywordAlignment, recommendAction, stateHash, stemSet, updateDrift } from '../../src/engine/drift/step-alignment.js'
import { measuredInOwnProcess } from './heap.js'

const GOAL = 'Build a REST API for user management'
const PLAN = ['Design schema', 'Implement endpoints', 'Write tests']
const T0 = Date.parse('2026-11-22T09:00:00.000Z')
const OFF = ['Researching quantum computing papers', 'Reading about medieval castles', 'Browsing holiday photos']

function fixedClock() {
  let now = T0
  return { clock: () => now, advance: (ms: number) => (now += ms) }
}

function tracker(plan: string[] = PLAN) {
  const c = fixedClock()
  const t = new GoalTracker(GOAL, { clock: c.clock })
  t.setPlan(plan)
  return { t, ...c }
}

describe('the reference example', () => {
  it('verifies an on-goal step: aligned, progress 1/3, continue', async () => {
    const { t } = tracker()
    const v = await t.verifyStep('Creating database migration', 'Created users table with id, email, name columns')
    expect(v.aligned).toBe(true)
    expect(v.alignment_score).toBeGreaterThanOrEqual(0.5)
    expect(v.progress_delta).toBeCloseTo(1 / 3)
    expect(v.drift_delta).toBe(0)
    expect(v.recommended_action).toBe('continue')
    expect(v.reasoning).toMatch(/goal terms \[user\]/)
    expect(t.getState()).toEqual({
      original_goal: GOAL,
      current_step: 1,
      total_steps_planned: 3,
      progress: 1 / 3,
      drift_score: 0,
      loop_detected: false,
      loop_count: 0,
      stall_turns: 0,
      timestamp: '2026-11-22T09:00:00.000Z',
    })
  })

  it('setPlan puts the step counter back to 0', () => {
    const { t } = tracker()
    t.verifyStepSync('Implement user endpoints', 'POST /users works')
    expect(t.getState().current_step).toBe(1)
    t.setPlan(['a', 'b'])
    expect(t.getState()).toMatchObject({ current_step: 0, total_steps_planned: 2, progress: 0 })
  })

  it('counts the current plan step: a step matching it is aligned without goal words', () => {
    const { t } = tracker(['Design database schema', 'Write integration tests'])
    const v = t.verifyStepSync('Drafted the database schema', 'tables and indexes')
    expect(v.aligned).toBe(true)
    expect(v.reasoning).toMatch(/plan terms \[(databas, schema|schema, databas)\]/)
  })
})

describe('recommended action precedence (first match wins)', () => {
  const base = { loop_detected: false, drift: 0, stall_turns: 0, alignment: 0.9 }
  it.each([
    [{ loop_detected: true, drift: 0.9, stall_turns: 9, alignment: 0.1 }, 'replan'],
    [{ drift: 0.6, stall_turns: 9, alignment: 0.1 }, 'replan'],
    [{ drift: 0.59, stall_turns: 5, alignment: 0.1 }, 'replan'],
    [{ drift: 0.3, stall_turns: 4, alignment: 0.1 }, 'adjust'],
    [{ drift: 0.29, alignment: 0.29 }, 'abort'],
    [{ drift: 0.29, alignment: 0.3 }, 'adjust'],
    [{ alignment: 0.49 }, 'adjust'],
    [{ alignment: 0.5 }, 'continue'],
    [{ drift: 0.29, stall_turns: 4, alignment: 0.5 }, 'continue'],
  ] as const)('%o -> %s', (over, action) => {
    expect(recommendAction({ ...base, ...over })).toBe(action)
  })
})

describe('drift, loops and stalls', () => {
  it('off-goal steps raise drift: adjust after one, replan after three', () => {
    const { t } = tracker()
    const actions = OFF.map((o) => t.verifyStepSync(o, '').recommended_action)
    expect(actions).toEqual(['adjust', 'adjust', 'replan'])
    expect(t.getState().drift_score).toBeGreaterThanOrEqual(0.6)
    const back = t.verifyStepSync('Implement REST endpoints for user management', 'done')
    expect(back.drift_delta).toBeLessThan(0)
  })

  it('aborts on a very low blended alignment while drift is still low', async () => {
    const { t } = tracker()
    const v = await t.verifyStep(OFF[0]!, '', async () => '0.3')
    expect(v.alignment_score).toBeCloseTo(0.7 * 0.3 + 0.3 * 0.15)
    expect(t.getState().drift_score).toBeLessThan(0.3)
    expect(v.recommended_action).toBe('abort')
  })

  it('detects a loop when the same step state is seen 3 times', () => {
    const { t } = tracker()
    const step = () => t.verifyStepSync('Implement user endpoints', 'POST /users returns 201')
    expect(step().recommended_action).toBe('continue')
    const second = step()
    expect(second.progress_delta).toBe(0) // a repeat is not new work
    const third = step()
    expect(third.recommended_action).toBe('replan')
    expect(third.reasoning).toMatch(/loop/)
    expect(t.getState()).toMatchObject({ loop_detected: true, loop_count: 1 })
    step()
    expect(t.getState().loop_count).toBe(2)
    t.resetLoopDetection()
    expect(t.getState().loop_detected).toBe(false)
    expect(step().recommended_action).toBe('continue')
  })

  it('normalizes the step state: case, order and repeated words do not matter', () => {
    expect(stateHash('Fix the  bug', 'Tests pass')).toBe(stateHash('bug fix THE', 'pass tests tests'))
    expect(stateHash('Fix the bug', 'Tests pass')).not.toBe(stateHash('Fix the bug', 'Tests fail'))
    expect(stateHash('Fix\u00a0the\tbug', '  Tests\npass ')).toBe(stateHash('fix the bug', 'tests pass'))
    // Only the first 200 characters of the output count.
    expect(stateHash('x', `${'a '.repeat(100)}tail`)).toBe(stateHash('x', 'a'))
  })

  it('keeps the hash format stored in snapshots: 14 hex digits', () => {
    expect(stateHash('implement the login endpoint', 'ok')).toBe('b38e9ac5186c7a')
    expect(stateHash('', '')).toBe('b533500bb1db7f')
  })

  it('a hash is a flat string, not a slice holding a longer string alive (the loop window keeps ~20 a session)', () => {
    // In a process of its own, collected before and after, over enough hashes that the run's other
    // allocations round to nothing: 32 bytes a flat hash, 72 when it was sliced from 16 digits.
    const module = fileURLToPath(new URL('../../src/engine/drift/step-alignment.ts', import.meta.url))
    const script = `
      import { stateHash } from ${JSON.stringify(module)}
      const kept = new Array(200000)
      gc(); const before = process.memoryUsage().heapUsed
      for (let i = 0; i < kept.length; i++) kept[i] = stateHash('step ' + i, 'ok')
      gc(); console.log((process.memoryUsage().heapUsed - before) / kept.length)`
    const perHash = measuredInOwnProcess(script)
    expect(perHash).toBeGreaterThan(16)
    expect(perHash).toBeLessThan(48)
  })

  it('tells apart long steps that share their alphabetically first 20 words', () => {
    const shared = Array.from({ length: 25 }, (_, i) => `a${String(i).padStart(2, '0')}`).join(' ')
    expect(stateHash(`${shared} zeta`, '')).not.toBe(stateHash(`${shared} omega`, ''))
  })

  it('gives distinct hashes to distinct word sets (no collisions among 20k)', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 20_000; i++) seen.add(stateHash(`step ${i}`, `output ${i % 7}`))
    expect(seen.size).toBe(20_000)
  })

  it('replans after 5 steps without progress', () => {
    const { t } = tracker()
    const actions = [1, 2, 3, 4, 5].map((i) => t.verifyStepSync(`ok ${i}`, '').recommended_action)
    expect(actions).toEqual(['continue', 'continue', 'continue', 'continue', 'replan'])
    expect(t.getState()).toMatchObject({ stall_turns: 5, drift_score: 0 })
    t.verifyStepSync('Design the user schema', '')
    expect(t.getState().stall_turns).toBe(0)
  })

  it('without a plan: aligned steps reset the stall counter but leave progress at 0', () => {
    const c = fixedClock()
    const t = new GoalTracker(GOAL, { clock: c.clock })
    for (let i = 0; i < 6; i++) expect(t.verifyStepSync(`Implement user API endpoint ${i}`, '').recommended_action).toBe('continue')
    expect(t.getState()).toMatchObject({ current_step: 0, total_steps_planned: 0, progress: 0, stall_turns: 0 })
    expect(t.getSummary()).toMatchObject({ steps_completed: 0, steps_planned: 0, verifications: 6 })
  })

  it('caps progress at 1 and counts completed plan steps', () => {
    const { t } = tracker(['Build API'])
    t.verifyStepSync('Build the user API', 'v1')
    t.verifyStepSync('Build the REST API', 'v2')
    expect(t.getState().progress).toBe(1)
    expect(t.getSummary().steps_completed).toBe(1)
  })
})

describe('heuristic properties', () => {
  const textArb = fc.array(fc.constantFrom('build', 'rest', 'api', 'users', 'management', 'quantum', 'castle', 'schema', 'the', 'tests'), { maxLength: 6 }).map((w) => w.join(' '))

  it('drift stays in [0, 1]; aligned steps never raise it, off-goal steps never lower it', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(textArb, textArb), { maxLength: 25 }), (steps) => {
        const { t } = tracker()
        for (const [d, o] of steps) {
          const before = t.getState().drift_score
          const v = t.verifyStepSync(d, o)
          const after = t.getState().drift_score
          expect(after).toBeGreaterThanOrEqual(0)
          expect(after).toBeLessThanOrEqual(1)
          expect(v.alignment_score).toBeGreaterThanOrEqual(0)
          expect(v.alignment_score).toBeLessThanOrEqual(1)
          if (v.aligned) expect(after).toBeLessThanOrEqual(before)
          if (v.alignment_score < 0.5) expect(after).toBeGreaterThanOrEqual(before)
        }
      }),
    )
  })

  it('updateDrift: lower for aligned, higher for off-goal, fixed at neutral', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (d, a) => {
        const next = updateDrift(d, a)
        expect(next).toBeGreaterThanOrEqual(0)
        expect(next).toBeLessThanOrEqual(1)
        if (a > 0.5) expect(next).toBeLessThanOrEqual(d)
        if (a < 0.5) expect(next).toBeGreaterThanOrEqual(d)
        // Strictly, whenever the move is large enough to survive floating-point rounding.
        if (a > 0.51 && d > 1e-9) expect(next).toBeLessThan(d)
        if (a < 0.49 && d < 1 - 1e-9) expect(next).toBeGreaterThan(d)
        if (a === 0.5) expect(next).toBe(d)
      }),
      { numRuns: 2000 },
    )
  })

  it('more shared keywords never lower the alignment', () => {
    const goal = stemSet(GOAL)
    const a0 = keywordAlignment(goal, [], stemSet('quantum papers')).score
    const a1 = keywordAlignment(goal, [], stemSet('quantum papers users')).score
    const a2 = keywordAlignment(goal, [], stemSet('quantum papers users api')).score
    expect(a0).toBeLessThan(a1)
    expect(a1).toBeLessThan(a2)
    expect(keywordAlignment(goal, [], stemSet('')).no_signal).toBe(true)
  })
})

describe('LLM verification', () => {
  it('is asked only when the heuristic is below 0.7, and blended 0.7 LLM + 0.3 heuristic', async () => {
    const { t } = tracker()
    const prompts: string[] = []
    const llm = async (p: string) => {
      prompts.push(p)
      return '{"score": 0.9, "reasoning": "schema work"}'
    }
    const strong = await t.verifyStep('Build REST API', 'user management endpoints', llm)
    expect(prompts).toHaveLength(0)
    expect(strong.alignment_score).toBe(1)
    const weak = await t.verifyStep('Creating database migration', 'Created users table', llm)
    expect(prompts).toHaveLength(1)
    expect(prompts[0]).toContain(GOAL)
    expect(prompts[0]).toContain('Implement endpoints')
    expect(weak.alignment_score).toBeCloseTo(0.7 * 0.9 + 0.3 * 0.575, 12)
    expect(weak.reasoning).toMatch(/LLM score 0.90/)
  })

  it('falls back to the heuristic on a timeout and leaves no timer behind', async () => {
    const c = fixedClock()
    const t = new GoalTracker(GOAL, { clock: c.clock, llmTimeoutMs: 30 })
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    const before = timers()
    const v = await t.verifyStep(OFF[0]!, '', () => new Promise<string>(() => {}))
    expect(v.alignment_score).toBe(0.15)
    expect(v.reasoning).toMatch(/timed out after 30 ms; heuristic used/)
    await t.verifyStep(OFF[1]!, '', async () => '0.2')
    // At most: a timer of an earlier test file run in this worker may expire meanwhile.
    expect(timers()).toBeLessThanOrEqual(before)
  })

  it('falls back on garbage and on errors', async () => {
    const { t } = tracker()
    const g = await t.verifyStep(OFF[0]!, '', async () => 'I think it is fine')
    expect(g.alignment_score).toBe(0.15)
    expect(g.reasoning).toMatch(/no usable score; heuristic used/)
    const e = await t.verifyStep(OFF[1]!, '', () => {
      throw new Error('boom')
    })
    expect(e.reasoning).toMatch(/failed \(boom\); heuristic used/)
  })

  it('parses answers leniently but never guesses', () => {
    expect(parseLlmScore('0.8')).toBe(0.8)
    expect(parseLlmScore('Score: .25')).toBe(0.25)
    expect(parseLlmScore('80%')).toBe(0.8)
    expect(parseLlmScore('```json\n{"score": "0.6"}\n```')).toBe(0.6)
    expect(parseLlmScore('{"alignment_score": 1}')).toBe(1)
    expect(parseLlmScore('{"verdict": "yes"}')).toBeNull()
    expect(parseLlmScore('8/10')).toBeNull()
    expect(parseLlmScore('{"score": 3}')).toBeNull()
    expect(parseLlmScore('no idea')).toBeNull()
    expect(parseLlmScore(0.4)).toBe(0.4)
    expect(parseLlmScore(undefined)).toBeNull()
  })
})

describe('sync and async agree; summary; serialization', () => {
  const stepArb = fc.tuple(
    fc.constantFrom('Design schema', 'Implement user endpoints', 'Researching quantum papers', 'ok', 'Write tests for the API'),
    fc.constantFrom('', 'done', 'Created users table', 'nothing'),
  )

  it('verifyStepSync equals verifyStep without an LLM', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { maxLength: 20 }), async (steps) => {
        const a = tracker().t
        const b = tracker().t
        for (const [d, o] of steps) expect(a.verifyStepSync(d, o)).toEqual(await b.verifyStep(d, o))
        expect(a.toJSON()).toEqual(b.toJSON())
      }),
      { numRuns: 100 },
    )
  })

  it('summarizes every field of the summary', () => {
    const { t, advance } = tracker()
    t.verifyStepSync('Design the user schema', 'tables')
    t.verifyStepSync(OFF[0]!, '')
    advance(90_000)
    const s = t.getSummary()
    expect(s).toEqual({
      goal: GOAL,
      progress: 1 / 3,
      drift: t.getState().drift_score,
      steps_completed: 1,
      steps_planned: 3,
      loops_detected: 0,
      stall_turns: 1,
      elapsed_seconds: 90,
      verifications: 2,
      avg_alignment: (t.getHistory()[0]!.alignment_score + 0.15) / 2,
    })
  })

  it('caps the verification history at 200', () => {
    const { t } = tracker()
    for (let i = 0; i < HISTORY_MAX + 20; i++) t.verifyStepSync(`step ${i}`, 'user api')
    expect(t.getHistory()).toHaveLength(HISTORY_MAX)
    expect(t.getSummary().verifications).toBe(HISTORY_MAX + 20)
  })

  it('a JSON round trip changes no later result', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 15 }), fc.array(stepArb, { minLength: 1, maxLength: 10 }), (before, after) => {
        const a = fixedClock()
        const b = fixedClock()
        const t = new GoalTracker(GOAL, { clock: a.clock })
        t.setPlan(PLAN)
        for (const [d, o] of before) t.verifyStepSync(d, o)
        const json = JSON.parse(JSON.stringify(t.toJSON())) as GoalTrackerJSON
        const copy = GoalTracker.fromJSON(json, { clock: b.clock })
        expect(copy.toJSON()).toEqual(t.toJSON())
        for (const [d, o] of after) {
          a.advance(500)
          b.advance(500)
          expect(copy.verifyStepSync(d, o)).toEqual(t.verifyStepSync(d, o))
          expect(copy.getState()).toEqual(t.getState())
        }
        expect(copy.getSummary()).toEqual(t.getSummary())
      }),
      { numRuns: 150 },
    )
  })
})
