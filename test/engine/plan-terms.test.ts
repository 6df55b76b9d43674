import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { PlanTerms } from '../../src/engine/session/plan-terms.js'
import { measuredInOwnProcess } from './heap.js'

it("computes a plan step's terms when it is asked for, once while kept, keeping the last four", () => {
  const computed: string[] = []
  const terms = new PlanTerms(
    Array.from({ length: 500 }, (_, i) => `step ${i}`),
    (text) => (computed.push(text), text.toUpperCase()),
  )
  expect(computed).toEqual([])
  // The focus walks the plan: the current step and the next, asked for again and again.
  for (let i = 0; i < 10; i++) for (let k = 0; k < 3; k++) expect(terms.slice(i, i + 2)).toEqual([`STEP ${i}`, `STEP ${i + 1}`])
  expect(computed).toHaveLength(11)
  expect(terms.at(500)).toBeUndefined()
  expect(terms.slice(499, 501)).toEqual(['STEP 499'])
  // Step 7 is no longer kept: it is computed again.
  terms.at(7)
  expect(computed.at(-1)).toBe('step 7')
  expect(computed).toHaveLength(13)
})

it('the largest session the schemas take (a 4,000-character goal, 500 plan steps of 2,000) holds under 4 MB of heap', () => {
  // In a process of its own, collected before and after: 20 MB when every plan step's terms were kept.
  const session = fileURLToPath(new URL('../../src/engine/session/goal-session.ts', import.meta.url))
  const script = `
    import { GoalSession } from ${JSON.stringify(session)}
    let n = 1
    const text = (length) => { let out = ''; while (out.length < length) out += 'w' + ((n = (n * 48271 + 11) % 2147483647) % 50000).toString(36) + ' '; return out.slice(0, length) }
    const goal = text(4000), plan = Array.from({ length: 500 }, () => text(2000))
    gc(); const before = process.memoryUsage().heapUsed
    const sessions = Array.from({ length: 5 }, () => GoalSession.fromJSON(new GoalSession({ goal, plan }).toJSON()))
    for (const s of sessions) s.step('Read {"file_path":"src/app.ts"}', 'ok')
    gc(); console.log((process.memoryUsage().heapUsed - before) / sessions.length)`
  const perSession = measuredInOwnProcess(script)
  expect(perSession).toBeGreaterThan(0)
  expect(perSession / 2 ** 20).toBeLessThan(4)
})
