import { expect, it } from 'vitest'
import { verdictSentence } from '../../src/mcp/texts.js'

const state = {
  original_goal: 'g',
  current_step: 1,
  total_steps_planned: 3,
  progress: 0.33,
  drift_score: 0,
  loop_detected: false,
  loop_count: 0,
  stall_turns: 0,
  timestamp: '2026-11-22T09:00:00.000Z',
}
const verification = { aligned: true, alignment_score: 0.9, drift_delta: 0, progress_delta: 0.33, reasoning: '', recommended_action: 'continue' as const }
const drift = { similarity: 0.4, severity: 'none' as const, drifting: false, consecutive_drift_count: 0, event: null }

it('record_step says in one sentence whether the step is on goal, how far it drifts, and what to do', () => {
  expect(verdictSentence({ step_number: 1, verification, drift, state })).toBe('Step 1 is aligned with the goal (alignment 0.90) with no drift; recommended action: continue, carry on with the plan.')
  expect(
    verdictSentence({
      step_number: 9,
      verification: { ...verification, aligned: false, alignment_score: 0.12, recommended_action: 'replan' },
      drift: { ...drift, similarity: 0.03, severity: 'critical', drifting: true },
      state: { ...state, loop_detected: true, stall_turns: 6 },
    }),
  ).toBe(
    'Step 9 is not aligned with the goal (alignment 0.12) with critical, sustained drift (similarity 0.03), a loop detected (the same step repeated) ' +
      'and no plan progress for 6 steps; recommended action: replan, stop, re-read the goal and make a new plan before the next step.',
  )
  // A stall below the engine's threshold is not worth a word.
  expect(verdictSentence({ step_number: 2, verification, drift, state: { ...state, stall_turns: 4 } })).not.toContain('progress')
})

it('names the loop kind with its advice instead of the generic one, and a spent budget', () => {
  const loop = {
    kind: 'same_call' as const,
    steps: [3, 4, 5, 6, 7],
    count: 5,
    subject: 'search_flights',
    advice: '"search_flights" was called 5 times in a row with the same arguments (steps 3–7): its answer will not change; use it or call something else.',
  }
  expect(verdictSentence({ step_number: 7, verification: { ...verification, recommended_action: 'adjust', loop }, drift, state: { ...state, loop_detected: true } })).toBe(
    'Step 7 is aligned with the goal (alignment 0.90) with no drift, a same_call loop; recommended action: adjust, ' +
      '"search_flights" was called 5 times in a row with the same arguments (steps 3–7): its answer will not change; use it or call something else.',
  )
  const spend = { tokens: 1100, cost_usd: 0, budget_fraction: 1.1, runaway: false }
  expect(verdictSentence({ step_number: 8, verification: { ...verification, recommended_action: 'abort', spend }, drift, state })).toBe(
    'Step 8 is aligned with the goal (alignment 0.90) with no drift, the budget spent; recommended action: abort, drop this line of work and return to the goal.',
  )
})

it('says a confirmed second opinion with its analysis as the advice; an unconfirmed one is not worth a word', () => {
  const second_opinion = { progress: false, confidence: 0.95, analysis: 'It reruns the same failing test; read the error first.', confirmed: true }
  expect(verdictSentence({ step_number: 10, verification: { ...verification, recommended_action: 'replan', second_opinion }, drift, state })).toBe(
    'Step 10 is aligned with the goal (alignment 0.90) with no drift, a second opinion finding no progress; recommended action: replan, ' + 'it reruns the same failing test; read the error first.',
  )
  expect(verdictSentence({ step_number: 10, verification: { ...verification, second_opinion: { ...second_opinion, confirmed: false } }, drift, state })).toBe(
    verdictSentence({ step_number: 10, verification, drift, state }),
  )
})
