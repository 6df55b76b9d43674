import { describe, expect, it } from 'vitest'
import { GoalSession, type StepSignals } from '../../src/engine/index.js'
import { StepReader } from '../../src/engine/drift/step-evidence.js'
import { readCall } from '../../src/engine/drift/code-entities.js'

const clock = () => Date.UTC(2026, 10, 22, 9)
const ISSUE = [
  'NDDataRef mask propagation fails when one of the operand does not have a mask',
  'In v5.3, `handle_mask=np.bitwise_or` fails with TypeError: unsupported operand type(s) for |: int and NoneType.',
  'The mask handling lives in astropy/nddata/mixins/ndarithmetic.py (_arithmetic_mask).',
].join('\n')
const lexical = { mode: 'lexical' as const, severity: 'none' as const }
const bash = (command: string): StepSignals => ({ tool: { name: 'Bash', args: { command } } })

describe('reading a coding step for evidence', () => {
  it('a Read of a file the issue names, a grep for its symbol, its error in an output: on the goal, and progress', () => {
    const r = new StepReader(ISSUE)
    const read = r.read('', 'class NDArithmeticMixin:', { tool: { name: 'Read', args: { file_path: 'astropy/nddata/mixins/ndarithmetic.py' } } }, [0, 1], lexical)
    expect(read).toMatchObject({ score: 0.9, progress: true, neutral: false })
    expect(read.reasoning).toContain('ndarithmetic.py')
    expect(r.read('', '', { tool: { name: 'Grep', args: { pattern: '_arithmetic_mask' } } }, [0, 1], lexical)).toMatchObject({ progress: true, neutral: false })
    const run = r.read('', 'Traceback …\nTypeError: unsupported operand type(s) for |: int and NoneType', bash('python repro.py'), [0, 1], lexical)
    expect(run.score).toBeGreaterThan(0.5)
  })

  it('housekeeping and test runs naming nothing of the goal are neutral, not off the goal', () => {
    const r = new StepReader(ISSUE)
    for (const command of ['ls -la', 'cd testbed && git diff', 'git log --oneline -1', 'pip install -e .', 'python -m pytest tests/ -x -q']) {
      expect(r.read('Let me check the current commit', 'ok', bash(command), [0, 1], lexical), command).toMatchObject({ score: 0.5, neutral: true, progress: false })
    }
    expect(r.read('', '', { tool: { name: 'TodoWrite', args: { todos: [{ content: 'Run the tests', status: 'pending' }] } } }, [0, 1], lexical).neutral).toBe(true)
  })

  it('a file the session changed is evidence when it comes back, and changing it again is progress', () => {
    const r = new StepReader(ISSUE)
    r.read('Write a reproduction', '', { tool: { name: 'Write', args: { file_path: '/tmp/t/repro_case.py', content: 'x = 1' } } }, [0, 1], lexical)
    const back = r.read('Look at it again', 'x = 1', { tool: { name: 'Read', args: { file_path: '/tmp/t/repro_case.py' } } }, [0, 1], lexical)
    expect(back).toMatchObject({ score: 0.7, progress: false })
    expect(r.read('', '', { tool: { name: 'Edit', args: { file_path: 'repro_case.py', old_string: 'x = 1', new_string: 'x = 2' } } }, [0, 1], lexical).progress).toBe(true)
    // Remembered across a snapshot.
    const again = StepReader.fromJSON(ISSUE, [], JSON.parse(JSON.stringify(r.toJSON())))
    expect(again.read('', 'x = 2', { tool: { name: 'Read', args: { file_path: 'repro_case.py' } } }, [0, 1], lexical).score).toBe(0.7)
  })

  it('one shared ordinary word is not evidence: "check slack for messages about lunch" against "check the 429 responses"', () => {
    const s = new GoalSession({ goal: 'Add rate limiting to the public search API', plan: ['check the 429 responses', 'add a limiter', 'document it'] }, { clock })
    expect(s.step('browse cat pictures on reddit').state.stall_turns).toBe(1)
    const r = s.step('check slack for messages about lunch')
    expect(r.verification.aligned).toBe(false)
    expect(r.verification.progress_delta).toBe(0)
    expect(r.state.stall_turns).toBe(1)
    // Specific words shared with the plan step in focus advance it.
    const ok = s.step('check the 429 responses of the search endpoint')
    expect(ok.verification.aligned).toBe(true)
    expect(ok.state.current_step).toBe(1)
    expect(ok.state.stall_turns).toBe(0)
    // Keyword alignment still counts the one word.
    const seed = new GoalSession({ goal: 'Add rate limiting to the public search API', plan: ['check the 429 responses'], config: { alignment: 'keywords' } }, { clock })
    expect(seed.step('check slack for messages about lunch').verification.aligned).toBe(true)
  })

  it('a coding session that goes well reads its steps as on the goal or neutral, never abort', () => {
    const s = new GoalSession({ goal: ISSUE }, { clock })
    const steps: [string, string, StepSignals][] = [
      ['Let me check the current commit', 'abc123', bash('git log --oneline -1')],
      ['', 'total 64', bash('ls -la')],
      ['', 'class NDArithmeticMixin', { tool: { name: 'Read', args: { file_path: 'astropy/nddata/mixins/ndarithmetic.py' } } }],
      ['Now let me fix it', 'ok', { tool: { name: 'Edit', args: { file_path: 'astropy/nddata/mixins/ndarithmetic.py', old_string: 'a', new_string: 'b' } } }],
      ['', '5 passed in 0.12s', bash('python -m pytest astropy/nddata -q')],
      ['', 'diff --git', bash('git diff')],
    ]
    const actions = steps.map(([d, o, sig]) => s.step(d, o, undefined, sig).verification.recommended_action)
    expect(actions).toEqual(['continue', 'continue', 'continue', 'continue', 'continue', 'continue'])
    expect(s.state().drift_score).toBe(0)
  })

  it('reads what a call does', () => {
    expect(readCall({ name: 'Bash', args: { command: 'cd repo && timeout 60 python -m pytest -x' } }).kind).toBe('run')
    expect(readCall({ name: 'execute_bash', args: { command: 'cd /workspace && ls -R' } }).kind).toBe('chore')
    expect(readCall({ name: 'bash', args: { command: "grep -rn '_arithmetic_mask' astropy/" } }).kind).toBe('look')
    expect(readCall({ name: 'str_replace_editor', args: { command: 'str_replace', path: '/w/a.py', old_str: 'x', new_str: 'y' } })).toMatchObject({ kind: 'change', files: ['a.py'] })
    expect(readCall({ name: 'str_replace_editor', args: { command: 'view', path: '/w/a.py' } }).kind).toBe('look')
  })
})
