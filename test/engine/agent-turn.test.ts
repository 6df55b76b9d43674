import { describe, expect, it } from 'vitest'
import { AgentTurn, GOAL_TEXT_MAX } from '../../src/engine/session/agent-turn.js'
import { GoalSession } from '../../src/engine/session/goal-session.js'
import { TodoList } from '../../src/engine/session/todo-tools.js'

const clock = () => Date.parse('2026-11-27T10:00:00Z')

describe('later prompts join the goal', () => {
  it('appends each prompt with content after "Then:", skips empty and repeated ones, and drops the oldest past the limit', () => {
    const t = new AgentTurn()
    expect(t.join('Fix the login bug', 'ok')).toBeNull()
    expect(t.join('Fix the login bug', 'Fix the login bug')).toBeNull()
    const two = t.join('Fix the login bug', 'Also add a test for it')
    expect(two).toBe('Fix the login bug\n\nThen: Also add a test for it')
    expect(t.join(two!, 'Also add a test for it')).toBeNull()
    let goal = two!
    for (let i = 0; i < 30; i++) goal = t.join(goal, `Step ${i}: ${'more detail '.repeat(80)}`) ?? goal
    expect(goal.length).toBeLessThanOrEqual(GOAL_TEXT_MAX)
    expect(goal.startsWith('Fix the login bug\n\nThen: Step ')).toBe(true)
    expect(goal).toContain('Step 29:')
  })

  it('keeps progress, counters and pitfalls, and scores a step about the new request as on-goal', () => {
    const s = new GoalSession({ goal: 'Fix the login bug in src/auth.ts', plan: ['reproduce', 'fix'] }, { clock })
    s.step('reproduce the login bug', 'reproduced: 500 on POST /login')
    s.addPitfall('the session cookie is httpOnly')
    const before = s.step('write a changelog entry about dark mode').verification.alignment_score
    s.userPrompt('Then switch the settings page to dark mode')
    expect(s.goal).toBe('Fix the login bug in src/auth.ts\n\nThen: Then switch the settings page to dark mode')
    expect(s.state()).toMatchObject({ current_step: 1, original_goal: s.goal })
    expect(s.stepsTaken).toBe(2)
    expect(s.addPitfall('x')).toContain('the session cookie is httpOnly')
    expect(s.step('switch the settings page to dark mode').verification.alignment_score).toBeGreaterThan(before)
    // It survives a snapshot.
    expect(GoalSession.fromJSON(s.toJSON(), { clock }).toJSON()).toEqual(s.toJSON())
  })
})

describe('the todo list is the plan', () => {
  const write = (items: [string, string][]) => ({ name: 'TodoWrite', args: { todos: items.map(([content, status]) => ({ content, status, activeForm: content })) } })

  it('reads the lists of Claude Code, Codex CLI and Gemini CLI, completed first, cancelled items dropped', () => {
    const todosOf = (tool: { name: string; args: Record<string, unknown> }) => new TodoList().apply(tool)
    expect(
      todosOf(
        write([
          ['b', 'pending'],
          ['a', 'completed'],
          ['c', 'in_progress'],
        ]),
      ),
    ).toEqual([
      { content: 'a', status: 'completed' },
      { content: 'c', status: 'in_progress' },
      { content: 'b', status: 'pending' },
    ])
    expect(
      todosOf({
        name: 'update_plan',
        args: {
          plan: [
            { step: 'x', status: 'completed' },
            { step: 'y', status: 'pending' },
          ],
        },
      }),
    ).toHaveLength(2)
    expect(
      todosOf({
        name: 'write_todos',
        args: {
          todos: [
            { description: 'x', status: 'cancelled' },
            { description: 'y', status: 'in_progress' },
          ],
        },
      }),
    ).toEqual([{ content: 'y', status: 'in_progress' }])
    expect(todosOf({ name: 'TodoWrite', args: { todos: 'not a list' } })).toBeNull()
    expect(todosOf({ name: 'Bash', args: { todos: [] } })).toBeNull()
  })

  it("follows Claude Code's task tools one item at a time, by the id each TaskCreate answered", () => {
    const list = new TodoList()
    expect(list.apply({ name: 'TaskUpdate', args: { taskId: '1', status: 'completed' } })).toBeNull()
    list.apply({ name: 'TaskCreate', args: { subject: 'Reproduce the bug', description: '…', taskId: '1' } })
    list.apply({ name: 'TaskCreate', args: { subject: 'Fix it', taskId: '2' } })
    expect(list.apply({ name: 'TaskCreate', args: { subject: 'No id' } })).toBeNull()
    expect(list.apply({ name: 'TaskUpdate', args: { taskId: '1', status: 'completed' } })).toEqual([
      { content: 'Reproduce the bug', status: 'completed' },
      { content: 'Fix it', status: 'pending' },
    ])
    expect(list.apply({ name: 'TaskUpdate', args: { taskId: '2', status: 'deleted' } })).toEqual([{ content: 'Reproduce the bug', status: 'completed' }])
    expect(TodoList.fromJSON(list.toJSON()).toJSON()).toEqual(list.toJSON())
  })

  it('moves progress only when an item is completed, and a completed item ends a stall', () => {
    const s = new GoalSession({ goal: 'Migrate the billing service to the new API' }, { clock })
    s.step('TodoWrite', '', undefined, {
      tool: write([
        ['read the API docs', 'in_progress'],
        ['port the client', 'pending'],
        ['run tests', 'pending'],
      ]),
    })
    expect(s.state()).toMatchObject({ total_steps_planned: 3, current_step: 0, progress: 0 })
    // Aligned steps do not move a todo plan; they would have advanced a REST plan.
    for (let i = 0; i < 5; i++) s.step(`read the billing API docs page ${i}`, 'billing API endpoints')
    expect(s.state()).toMatchObject({ current_step: 0, progress: 0 })
    for (let i = 0; i < 5; i++) s.step(`look at unrelated file ${i}`, '')
    expect(s.state().stall_turns).toBeGreaterThanOrEqual(5)
    s.step('TodoWrite', '', undefined, {
      tool: write([
        ['read the API docs', 'completed'],
        ['port the client', 'in_progress'],
        ['run tests', 'pending'],
      ]),
    })
    expect(s.state()).toMatchObject({ current_step: 1, stall_turns: 0 })
    expect(s.state().progress).toBeCloseTo(1 / 3)
    expect(s.recitation(20).content).toContain('**Current Task**: port the client')
  })
})

describe('stopping with open items', () => {
  it('blocks up to the cap per user turn, never after an abort, and reports the stop once it goes through', () => {
    const t = new AgentTurn()
    expect(t.stop([], false, 3)).toEqual({ block: null, outcome: 'done', open_items: [] })
    expect(t.stop(['a', 'b'], true, 3)).toMatchObject({ block: null, outcome: 'aborted' })
    const blocks = [t.stop(['a'], false, 2), t.stop(['a'], false, 2), t.stop(['a'], false, 2)]
    expect(blocks.map((b) => b.block === null)).toEqual([false, false, true])
    expect(blocks[0]!.block).toContain('1 item of your plan is still open: 1. a.')
    t.newTurn()
    expect(t.stop(['a'], false, 2).block).not.toBeNull()
    expect(new AgentTurn().stop(['a'], false, 0).block).toBeNull()

    const s = new GoalSession({ goal: 'Ship it', plan: ['build', 'deploy'] }, { clock })
    const { result, events } = s.stop(1)
    expect(result.open_items).toEqual(['build', 'deploy'])
    expect(events).toEqual([])
    expect(s.stop(1).events).toEqual([{ type: 'stopped', data: { step_number: 0, outcome: 'open_items', open_items: ['build', 'deploy'] } }])
  })
})
