import { describe, expect, it } from 'vitest'
import { GoalSession, type StepSignals } from '../../src/engine/index.js'
import { callWork } from '../../src/engine/detection/budget-stall.js'

const GOAL = 'Fix the off-by-one error in lastPage (src/pagination.ts) so the last page of GET /items is not empty'
const clock = () => Date.UTC(2026, 10, 27, 9)
type Step = [string, string, StepSignals]
const call = (name: string, args: Record<string, unknown>, output: string, cost_usd: number): Step => [`${name} ${JSON.stringify(args)}`, output, { tool: { name, args }, cost_usd }]
const bash = (command: string, cost = 0.01, output = 'ok'): Step => call('Bash', { command }, output, cost)
/** A read of another part of the goal's file, with its own answer (news: no busy stall). */
const read = (i: number, cost = 0.01): Step => call('Read', { file_path: 'src/pagination.ts', offset: i * 50 }, `lines ${i * 50}-${i * 50 + 49}`, cost)
/** Half of a $1 budget spent, ending on work: an edit and a test run. */
const HALF: Step[] = [call('Edit', { file_path: 'src/pagination.ts', old_string: 'n', new_string: 'n + 1' }, 'ok', 0.25), bash('npm test', 0.25, '3 passed, 1 failed')]
const reads = (n: number, from = 0, cost = 0.01) => Array.from({ length: n }, (_, i) => read(from + i, cost))

function run(steps: Step[], config: Record<string, unknown> = { budget: { cost_usd: 1 } }) {
  const s = new GoalSession({ goal: GOAL, config }, { clock })
  return { s, results: steps.map(([d, o, signals]) => s.step(d, o, undefined, signals)) }
}
const caught = (steps: Step[], config?: Record<string, unknown>) => run(steps, config).results.some((r) => r.verification.budget_stall !== undefined)

describe('reading past half the budget', () => {
  it('10 tool calls in a row that only read, past half the budget, answer replan with the stall and its advice', () => {
    const { s, results } = run([...HALF, ...reads(11)])
    expect(s.config.budget_stall).toEqual({ at: 0.5, calls: 10 })
    expect(results.slice(0, 11).every((r) => r.verification.budget_stall === undefined && r.verification.recommended_action === 'continue')).toBe(true)
    const v = results[11]!.verification
    expect(v.budget_stall).toMatchObject({ count: 10, since: 3, budget_fraction: 0.6 })
    expect(v.recommended_action).toBe('replan')
    expect(v.reasoning).toContain('60% of the budget is spent and the last 10 tool calls (since step 3) only read or searched')
    expect(results[12]!.verification).toMatchObject({ recommended_action: 'replan', budget_stall: { count: 11 } })
  })

  it('a run of reads that began before half the budget counts; at a custom threshold and length', () => {
    // 10 reads at 4.5 cents: the 10th brings the spend from 0.45 + 0.045 to 0.5 (with the edit's 0.05).
    expect(caught([call('Edit', { file_path: 'src/pagination.ts' }, 'ok', 0.05), ...reads(10, 0, 0.045)])).toBe(true)
    expect(caught([...HALF, ...reads(6)], { budget: { cost_usd: 1 }, budget_stall: { calls: 6 } })).toBe(true)
    expect(caught([...HALF, ...reads(10)], { budget: { cost_usd: 2 }, budget_stall: { at: 0.25 } })).toBe(true)
  })

  it('near misses: 9 reads; below half the budget; no budget; work between (a test run, a script, sed -i, a here-document into a file); a todo item done', () => {
    expect(caught([...HALF, ...reads(9)])).toBe(false)
    expect(caught([call('Edit', { file_path: 'src/pagination.ts' }, 'ok', 0.05), ...reads(10, 0, 0.04)])).toBe(false)
    expect(caught([...HALF, ...reads(15)], {})).toBe(false)
    expect(caught([...HALF, ...reads(15)], { budget: { cost_usd: 1 }, budget_stall: false })).toBe(false)
    for (const work of ['cd app && npm test -- pagination', 'python repro.py', "sed -i 's/n/n + 1/' src/pagination.ts", "cat <<'EOF' > repro.py\nprint(lastPage(10, 5))\nEOF", 'git apply fix.patch']) {
      expect(caught([...HALF, ...reads(5), bash(work), ...reads(5, 5)]), work).toBe(false)
    }
    const todos = (done: number): Step => call('TodoWrite', { todos: ['find lastPage', 'fix it'].map((content, i) => ({ content, status: i < done ? 'completed' : 'pending' })) }, '', 0.01)
    expect(caught([...HALF, todos(0), ...reads(5), todos(1), ...reads(5, 5)])).toBe(false)
  })

  it('message steps and a tool of the agent own neither count nor end the run', () => {
    const message: Step = ['Let me think about where pages are counted', '', { cost_usd: 0.01 }]
    const own: Step = call('lookup_order', { id: 7 }, 'order 7', 0.01)
    expect(caught([...HALF, ...reads(5), message, own, ...reads(4, 5)])).toBe(false)
    expect(caught([...HALF, ...reads(5), message, own, ...reads(5, 5)])).toBe(true)
  })

  it('reads a shell command for what it does: reads and searches, redirects to /dev/null and 2>&1 are reading; writes and runs are work', () => {
    const work = (command: string) => callWork({ name: 'bash', args: { command } })
    for (const c of ['grep -rn lastPage src 2>/dev/null', 'cat src/pagination.ts 2>&1 | head', 'find . -name "*.ts" > /dev/null', 'git log -5', 'ls -la', 'npm install'])
      expect(work(c), c).toBe('reading')
    for (const c of ['echo "x" > notes.txt', 'grep -n a b >> out.log', 'sed -n 1p a | tee copy.txt', 'patch -p1 < fix.diff', './mvnw test', 'yarn test']) expect(work(c), c).toBe('work')
    expect(callWork({ name: 'str_replace_editor', args: { command: 'view', path: 'a.py' } })).toBe('reading')
    expect(callWork({ name: 'str_replace_editor', args: { command: 'str_replace', path: 'a.py' } })).toBe('work')
    expect(callWork({ name: 'book_reservation', args: { flight: 'HAT001' } })).toBeNull()
  })

  it('a session stored without budget_stall is not watched; bad values are refused, naming the field', () => {
    const { s } = run([])
    const json = s.toJSON()
    delete json.config.budget_stall
    delete json.detection!.budget_stall
    const old = GoalSession.fromJSON(json, { clock })
    expect([...HALF, ...reads(15)].map(([d, o, sig]) => old.step(d, o, undefined, sig)).every((r) => r.verification.budget_stall === undefined)).toBe(true)
    const bad: [unknown, string][] = [
      [{ at: 0 }, 'budget_stall/at'],
      [{ at: 1 }, 'budget_stall/at'],
      [{ calls: 2 }, 'budget_stall/calls'],
      [{ calls: 1001 }, 'budget_stall/calls'],
      [{ calls: 7.5 }, 'budget_stall/calls'],
    ]
    for (const [budget_stall, field] of bad) {
      expect(() => new GoalSession({ goal: GOAL, config: { budget_stall } as never }), JSON.stringify(budget_stall)).toThrow(expect.objectContaining({ field }))
    }
  })

  it('a JSON round trip mid-run gives the same later verdicts', () => {
    const steps = [...HALF, ...reads(12)]
    const straight = run(steps).results
    const first = run(steps.slice(0, 7)).s
    const resumed = GoalSession.fromJSON(JSON.parse(JSON.stringify(first.toJSON())), { clock })
    expect(steps.slice(7).map(([d, o, sig]) => resumed.step(d, o, undefined, sig))).toEqual(straight.slice(7))
  })
})
