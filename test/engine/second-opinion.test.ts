import { describe, expect, it } from 'vitest'
import { GoalSession } from '../../src/engine/index.js'
import { askOpinion, parseOpinion, type Opinion, type OpinionOutcome } from '../../src/engine/detection/second-opinion.js'

const GOAL = 'Fix the off-by-one error in lastPage so the last page of GET /items is not empty'
const clock = () => Date.UTC(2026, 10, 27, 9)
const no = (confidence: number, analysis = 'It reruns the same failing test without changing the code.'): Opinion => ({ progress: false, confidence, analysis })
const yes = (confidence: number): Opinion => ({ progress: true, confidence, analysis: '' })

/**
 * Steps a session as the service does: when an opinion is due, the next answer of `answers`
 * (an outcome, or undefined for a provider that failed) goes with the step. Returns the step
 * numbers the opinions came with and the verdicts.
 */
function run(steps: number, answers: (OpinionOutcome | null)[], config: Record<string, unknown> = {}) {
  const s = new GoalSession({ goal: GOAL, config: { second_opinion: {}, ...config } }, { clock })
  const asked: number[] = []
  const results = Array.from({ length: steps }, (_, i) => {
    const due = s.opinionDue
    if (due) asked.push(i + 1)
    const outcome = due ? (answers.shift() ?? { answer: null, confirmed: false }) : undefined
    const file_path = `src/pagination/last-page-${i}.ts`
    return s.step(`Read ${file_path}`, `export function lastPage${i}(total, size) {}`, undefined, { tool: { name: 'Read', args: { file_path } } }, outcome ?? undefined)
  })
  return { s, asked, results }
}

describe('the second opinion', () => {
  it('comes after N steps, then every K; sooner (K/2) after an unsure answer or an unconfirmed "no"; never without config', () => {
    const sure = { answer: yes(0.95), confirmed: false }
    expect(run(40, [sure, sure, sure, sure]).asked).toEqual([10, 20, 30, 40])
    expect(run(30, [sure, sure], { second_opinion: { after: 5, every: 12 } }).asked).toEqual([5, 17, 29])
    // Unsure (below 0.7): half the interval; a failure: the whole.
    expect(run(30, [{ answer: yes(0.5), confirmed: false }, sure, null, sure]).asked).toEqual([10, 15, 25])
    // A confident "no" the second call did not confirm: sooner too.
    expect(run(26, [{ answer: no(0.95), confirmed: false }, sure]).asked).toEqual([10, 15, 25])
    expect(run(40, [], { second_opinion: undefined }).asked).toEqual([])
  })

  it('a confirmed confident "no" answers replan with the analysis; an unconfirmed one, 0.89, a "yes" or a failure change nothing but the report', () => {
    const at10 = (outcome: OpinionOutcome | null) => run(10, [outcome]).results[9]!.verification
    const plain = run(10, [], { second_opinion: undefined }).results[9]!.verification
    expect(plain.recommended_action).toBe('continue')
    const confirmed = at10({ answer: no(0.93), confirmed: true })
    expect(confirmed.recommended_action).toBe('replan')
    expect(confirmed.second_opinion).toEqual({ ...no(0.93), confirmed: true })
    expect(confirmed.reasoning).toContain('second opinion (confidence 0.93, confirmed): not making progress: It reruns the same failing test')
    for (const outcome of [
      { answer: no(0.95), confirmed: false },
      { answer: no(0.89), confirmed: true },
      { answer: yes(1), confirmed: false },
    ]) {
      const v = at10(outcome)
      expect(v.recommended_action, JSON.stringify(outcome)).toBe('continue')
      expect(v.second_opinion).toEqual({ ...outcome.answer, confirmed: false })
    }
    // A provider that failed: the verdict is the one without a second opinion.
    expect(at10(null)).toEqual(plain)
  })

  it('the schedule survives a JSON round trip; after and every out of range are refused, naming the field', () => {
    const first = run(12, [{ answer: yes(0.5), confirmed: false }]).s
    const resumed = GoalSession.fromJSON(JSON.parse(JSON.stringify(first.toJSON())), { clock })
    // Asked at 10, unsure: next at 15.
    expect(
      [13, 14, 15].map(() => {
        const due = resumed.opinionDue
        resumed.step('Read src/items.ts', 'x')
        return due
      }),
    ).toEqual([false, false, true])
    for (const [field, v] of [
      ['after', 1],
      ['every', 1001],
      ['every', 2.5],
    ] as const) {
      expect(() => new GoalSession({ goal: GOAL, config: { second_opinion: { [field]: v } } }), `${field} ${v}`).toThrow(expect.objectContaining({ field: `second_opinion/${field}` }))
    }
  })

  it('reads the answer as JSON, also fenced or in prose; refuses what says nothing usable', () => {
    expect(parseOpinion('```json\n{"progress": false, "confidence": 0.92, "analysis": " Stuck. "}\n```')).toEqual({ progress: false, confidence: 0.92, analysis: 'Stuck.' })
    expect(parseOpinion('Here: {"progress": true, "confidence": "0.8"}')).toEqual({ progress: true, confidence: 0.8, analysis: '' })
    for (const bad of ['no', '{"progress": "no", "confidence": 0.9}', '{"progress": false, "confidence": 1.5}', '{"progress": false}', '{broken']) expect(parseOpinion(bad), bad).toBeNull()
  })

  it('asks a second time, with the first analysis, only to confirm a confident "no"; a failing call is no answer', async () => {
    const steps = [{ step_number: 1, description: 'Bash npm test', output: '1 failed' }]
    const asking = (...answers: (string | Error)[]) => {
      const prompts: string[] = []
      const ask = (prompt: string) => {
        prompts.push(prompt)
        const a = answers.shift()!
        if (a instanceof Error) throw a
        return a
      }
      return { ask, prompts }
    }
    const noJson = '{"progress": false, "confidence": 0.95, "analysis": "Reruns the same test."}'
    const both = asking(noJson, '{"progress": false, "confidence": 0.9, "analysis": "Agreed."}')
    expect(await askOpinion(both.ask, GOAL, steps)).toEqual({ answer: no(0.95, 'Reruns the same test.'), confirmed: true })
    expect(both.prompts[0]).toContain(`Goal: ${GOAL}`)
    expect(both.prompts[0]).toContain('1. Bash npm test -> 1 failed')
    expect(both.prompts[1]).toContain('A first review found it is not making progress: Reruns the same test.')
    // The second call disagrees, or fails: not confirmed.
    expect((await askOpinion(asking(noJson, '{"progress": true, "confidence": 0.6}').ask, GOAL, steps)).confirmed).toBe(false)
    expect((await askOpinion(asking(noJson, new Error('LLM endpoint answered 500')).ask, GOAL, steps)).confirmed).toBe(false)
    // Not a confident "no": one call only.
    const once = asking('{"progress": false, "confidence": 0.8, "analysis": "Maybe."}')
    expect(await askOpinion(once.ask, GOAL, steps)).toEqual({ answer: no(0.8, 'Maybe.'), confirmed: false })
    expect(once.prompts).toHaveLength(1)
    expect(await askOpinion(asking(new Error('timeout')).ask, GOAL, steps)).toEqual({ answer: null, confirmed: false })
  })
})
