import { describe, expect, it } from 'vitest'
import { GoalSession, type StepSignals } from '../../src/engine/index.js'

const GOAL = 'Fix the off-by-one error in src/pagination.ts so the last page of GET /items is not empty'
const clock = () => Date.UTC(2026, 10, 27, 9)
const TOOLS = ['read_file', 'write_file', 'run_shell', 'mcp__github__*']

const call = (name: string, args: Record<string, unknown> = { path: 'src/pagination.ts' }): StepSignals => ({ tool: { name, args } })

function session(config: Record<string, unknown> = { tools: TOOLS }) {
  const s = new GoalSession({ goal: GOAL, config }, { clock })
  return { s, step: (signals: StepSignals, d = 'read src/pagination.ts') => s.step(d, 'ok', undefined, signals) }
}

describe('unknown tools', () => {
  it('a call to a tool the session does not have is named at the first call, with the nearest tools, and answered adjust', () => {
    const { step } = session()
    const v = step(call('readFile')).verification
    expect(v.unknown_tool).toEqual({ name: 'readFile', similar: ['read_file'], count: 1 })
    expect(v.recommended_action).toBe('adjust')
    expect(v.reasoning).toContain('"readFile" is not one of your tools: the call cannot work. The nearest of your tools: "read_file".')
  })

  it('calls to unknown tools going on answer replan; a known tool ends the run, a message between does not', () => {
    const { step } = session()
    expect(step(call('search_code')).verification).toMatchObject({ unknown_tool: { count: 1, similar: [] }, recommended_action: 'adjust' })
    step({}, 'Let me try another way')
    expect(step(call('grep_files')).verification).toMatchObject({ unknown_tool: { count: 2 }, recommended_action: 'replan' })
    expect(step(call('read_file')).verification.unknown_tool).toBeUndefined()
    expect(step(call('grep_files')).verification).toMatchObject({ unknown_tool: { count: 1 }, recommended_action: 'adjust' })
  })

  it('near misses: a listed tool, a tool under a listed prefix, a session without a list', () => {
    const { step } = session()
    for (const name of ['read_file', 'run_shell', 'mcp__github__create_issue']) expect(step(call(name)).verification.unknown_tool, name).toBeUndefined()
    expect(session({}).step(call('anything_at_all')).verification.unknown_tool).toBeUndefined()
  })

  it('the reported list replaces config.tools, and survives a JSON round trip with the run in progress', () => {
    const { s, step } = session()
    expect(s.reportTools(['Read', 'Edit', 'Bash', 'Read'])).toEqual(['Read', 'Edit', 'Bash'])
    expect(step(call('read_file')).verification.unknown_tool).toMatchObject({ name: 'read_file', similar: ['Read'] })
    const resumed = GoalSession.fromJSON(JSON.parse(JSON.stringify(s.toJSON())), { clock })
    expect(resumed.step('x', '', undefined, call('Grep')).verification.unknown_tool).toMatchObject({ name: 'Grep', count: 2 })
    expect(resumed.step('x', '', undefined, call('Bash')).verification.unknown_tool).toBeUndefined()
  })

  it('a tool list that is not one is refused, naming the field', () => {
    for (const [tools, field] of [
      [['*'], 'tools/0'],
      [['Read', ''], 'tools/1'],
      [['x'.repeat(201)], 'tools/0'],
      ['Read', 'tools'],
    ] as const) {
      expect(() => new GoalSession({ goal: GOAL, config: { tools } as never }), field).toThrow(expect.objectContaining({ field }))
    }
  })
})
