import { describe, expect, it } from 'vitest'
import { GoalSession, type StepSignals } from '../../src/engine/index.js'

const GOAL = 'Fix the off-by-one error in lastPage so the last page of GET /items is not empty'
const clock = () => Date.UTC(2026, 10, 27, 9)
const grep = (pattern: string, o = 'No matches found'): [string, string, StepSignals] => [`Grep ${pattern}`, o, { tool: { name: 'Grep', args: { pattern } } }]

function run(steps: [string, string, StepSignals][], config: Record<string, unknown> = {}) {
  const s = new GoalSession({ goal: GOAL, config }, { clock })
  return { s, results: steps.map(([d, o, signals]) => s.step(d, o, undefined, signals)) }
}

const patterns = ['pageCount', 'page_count', 'lastIndex', 'ceilDiv', 'numPages', 'totalPages', 'pages(', 'offsetEnd', 'endPage', 'PAGE_SIZE']

describe('busy but going nowhere', () => {
  it('8 tool calls in a row with nothing new (new patterns, the same empty answer) answer replan, once reported as a busy stall', () => {
    const { results } = run(patterns.slice(0, 9).map((p) => grep(p)))
    // The first "No matches found" is news; the 8 calls after it are not.
    expect(results.slice(0, 8).every((r) => r.verification.busy_stall === undefined)).toBe(true)
    expect(results[8]!.verification.busy_stall).toMatchObject({ count: 8, since: 2 })
    expect(results[8]!.verification.recommended_action).toBe('replan')
    expect(results[8]!.verification.reasoning).toContain('The last 8 tool calls (since step 2) brought nothing new')
    expect(results[8]!.events).toContainEqual({ type: 'stalled', data: { step_number: 9, stall_turns: expect.any(Number), kind: 'busy', busy_steps: 8, since: 2 } })
    // Going on: still a busy stall, no second event.
    const more = run(patterns.map((p) => grep(p))).results[9]!
    expect(more.verification.busy_stall).toMatchObject({ count: 9 })
    expect(more.events.filter((e) => e.type === 'stalled' && e.data.kind === 'busy')).toEqual([])
  })

  it('near misses: an answer not seen before, a file not touched before, a todo item done, 7 calls; message steps do not count', () => {
    const busy = (steps: [string, string, StepSignals][]) => run(steps).results.some((r) => r.verification.busy_stall !== undefined)
    const nine = patterns.slice(0, 9).map((p) => grep(p))
    expect(busy(nine.slice(0, 8))).toBe(false)
    expect(busy([...nine.slice(0, 5), grep('lastPage', 'src/pagination.ts:12: export function lastPage('), ...nine.slice(5)])).toBe(false)
    expect(busy([...nine.slice(0, 5), ['Read', 'x', { tool: { name: 'Read', args: { file_path: 'src/routes/items.ts' } } }], ...nine.slice(5)])).toBe(false)
    const todo = (done: number): [string, string, StepSignals] => [
      'TodoWrite',
      '',
      {
        tool: {
          name: 'TodoWrite',
          args: {
            todos: [
              ['find lastPage', done > 0],
              ['fix it', false],
            ].map(([content, completed]) => ({ content, status: completed ? 'completed' : 'pending' })),
          },
        },
      },
    ]
    expect(busy([todo(0), ...nine.slice(0, 5), todo(1), ...nine.slice(5)])).toBe(false)
    const withMessages = run([...nine.slice(0, 5), ['Let me think about where pages are counted', '', {}], ...nine.slice(5)]).results
    expect(withMessages.at(-1)!.verification.busy_stall).toMatchObject({ count: 8 })
  })

  it('a session stored without busy_after is not watched; busy_after out of range is refused, naming the field', () => {
    const { s } = run([])
    const json = s.toJSON()
    delete json.config.busy_after
    delete json.detection!.busy
    const old = GoalSession.fromJSON(json, { clock })
    const results = patterns.map((p) => old.step(...(grep(p).slice(0, 2) as [string, string]), undefined, grep(p)[2]))
    expect(results.every((r) => r.verification.busy_stall === undefined)).toBe(true)
    for (const busy_after of [2, 1001, 7.5]) expect(() => new GoalSession({ goal: GOAL, config: { busy_after } }), String(busy_after)).toThrow(expect.objectContaining({ field: 'busy_after' }))
  })

  it('a JSON round trip mid-run gives the same later verdicts', () => {
    const steps = patterns.map((p) => grep(p))
    const straight = run(steps).results
    const first = run(steps.slice(0, 5)).s
    const resumed = GoalSession.fromJSON(JSON.parse(JSON.stringify(first.toJSON())), { clock })
    expect(steps.slice(5).map(([d, o, sig]) => resumed.step(d, o, undefined, sig))).toEqual(straight.slice(5))
  })
})
