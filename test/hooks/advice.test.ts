import { expect, it } from 'vitest'
import { GoalSession } from '../../src/engine/session/goal-session.js'
import { adviceFor } from '../../src/hooks/advice.js'

const clock = () => Date.parse('2026-11-27T10:00:00Z')

it('says nothing on continue, nor on an adjust for one low-scoring step alone; names the loop, drift or stall otherwise', () => {
  const s = new GoalSession({ goal: 'Fix the off-by-one error in src/pagination.ts' }, { clock })
  const read = { tool: { name: 'Read', args: { file_path: 'src/pagination.ts' } } }
  expect(adviceFor(s.step('Read src/pagination.ts', 'export function lastPage() {}', undefined, read))).toBeNull()
  const offGoal = s.step('WebSearch espresso machines for the office kitchen', 'Top 10 espresso machines of 2026', undefined, { tool: { name: 'WebSearch', args: { query: 'espresso machines' } } })
  expect(offGoal.verification.recommended_action).toBe('adjust')
  expect(adviceFor(offGoal)).toBeNull()
  const fail = { tool: { name: 'Bash', args: { command: 'npm test -- pagination' } }, error: true }
  let last = s.step('Bash: npm test -- pagination', 'FAIL: expected 3, got 2', undefined, fail)
  for (let i = 0; i < 2; i++) last = s.step('Bash: npm test -- pagination', 'FAIL: expected 3, got 2', undefined, fail)
  expect(adviceFor(last)).toMatch(/^goalkeeper \(step \d+, adjust\): .*failed 3 times in a row.* Make sure your next step serves the goal\.$/)
})
