import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { calculateOptimalFrequency, RECITATION_HISTORY_LIMIT, RecitationManager, type ChatMessage, type RecitationEvent, type RecitationState } from '../../src/engine/context/recitation.js'
import { countTokens } from '../../src/engine/similarity/text.js'
import { countTokensByLines } from '../../src/engine/context/token-fit.js'

const fixed = () => Date.UTC(2026, 0, 2, 3, 4, 5)
const all = ['goal', 'plan', 'todo', 'memory', 'custom'] as const

const plan = [
  { description: 'Design schema', status: 'completed' as const },
  { description: 'Create user model', status: 'in_progress' as const },
  { description: 'Add routes', status: 'pending' as const },
  { description: 'Write tests', status: 'pending' as const },
]
const todos = [
  { content: 'Set up project', status: 'completed' as const },
  { content: 'Fix password validation', status: 'in_progress' as const },
  { content: 'Add JWT', status: 'pending' as const },
  { content: 'Add refresh', status: 'pending' as const },
]

describe('RecitationManager schedule (notes §1.2)', () => {
  it('injects at 1, then every `frequency` iterations after the last injection', () => {
    const m = new RecitationManager({ frequency: 5 })
    const s = (iteration: number): RecitationState => ({ iteration, goal: 'g' })
    expect(m.shouldInject(1)).toBe(true)
    m.injectIfNeeded([], s(1))
    expect([2, 3, 4, 5].map((i) => m.shouldInject(i))).toEqual([false, false, false, false])
    expect(m.shouldInject(6)).toBe(true)
    m.injectIfNeeded([], s(6))
    expect(m.shouldInject(7)).toBe(false)
    expect(m.shouldInject(11)).toBe(true)
    expect(m.shouldInject(1)).toBe(true)
  })

  it('updateConfig changes the frequency', () => {
    const m = new RecitationManager({ frequency: 5 })
    m.injectIfNeeded([], { iteration: 1, goal: 'g' })
    expect(m.shouldInject(3)).toBe(false)
    m.updateConfig({ frequency: 2 })
    expect(m.shouldInject(3)).toBe(true)
    expect(() => m.updateConfig({ max_tokens: 0 })).toThrow(RangeError)
  })

  it('has the documented defaults', () => {
    expect(new RecitationManager().getConfig()).toEqual({
      frequency: 5,
      sources: ['goal', 'plan', 'todo'],
      max_tokens: 500,
      track_history: true,
    })
  })

  it('calculateOptimalFrequency: 10 / 7 / 5 / 3 with boundaries at 10k, 30k, 60k', () => {
    expect([0, 9_999, 10_000, 29_999, 30_000, 59_999, 60_000, 1e6].map(calculateOptimalFrequency)).toEqual([10, 10, 7, 7, 5, 5, 3, 3])
  })

  it('adaptive frequency follows the context size and remembers it', () => {
    const m = new RecitationManager({ frequency: 'adaptive' })
    expect(m.frequencyFor()).toBe(5)
    m.injectIfNeeded([], { iteration: 1, goal: 'g' })
    expect(m.shouldInject(4, 70_000)).toBe(true) // every 3
    expect(m.shouldInject(4, 5_000)).toBe(false) // every 10
    expect(m.shouldInject(11)).toBe(true)
    expect(m.frequencyFor()).toBe(10)
    const r = m.inject([], { iteration: 4, goal: 'g', context_tokens: 65_000 })
    expect(r.injected).toBe(true)
  })
})

describe('buildRecitation formats (notes §1.3, §1.7)', () => {
  const m = new RecitationManager({ frequency: 5, sources: [...all] })

  it('renders the goal, plan, todo, memory and always-on parts exactly', () => {
    const out = m.buildRecitation({
      iteration: 1,
      goal: 'Build a REST API',
      plan_tasks: plan,
      current_task_index: 1,
      todos,
      memories: ['m1', 'm2', 'm3', 'm4', 'm5'],
      active_files: ['src/auth.ts', 'src/user.ts'],
      recent_errors: ['e1', 'e2', 'e3'],
    })
    expect(out).toBe(
      [
        '**Goal**: Build a REST API',
        '**Plan Progress**: 1/4 tasks completed\n**Current Task**: Create user model\n**Next**: Add routes; Write tests',
        '**Todo Status**: 1 done, 1 active, 2 pending\n**In Progress**: Fix password validation\n**Remaining**: Add JWT; Add refresh',
        '**Relevant Context**: m1; m2; m3 (+2 more)',
        '**Active files**: src/auth.ts, src/user.ts',
        '**Recent errors**: e2; e3',
      ].join('\n\n'),
    )
  })

  it('takes the first in_progress task as current when no index is given; -1 shows none', () => {
    expect(m.buildRecitation({ iteration: 1, plan_tasks: plan })).toContain('**Current Task**: Create user model')
    expect(m.buildRecitation({ iteration: 1, plan_tasks: plan, current_task_index: -1 })).not.toContain('Current Task')
    expect(m.buildRecitation({ iteration: 1, plan_tasks: [] })).toBe('**Plan Progress**: 0/0 tasks completed')
  })

  it('shows the first 3 pending todos and (+N more) beyond 3', () => {
    const five = ['a', 'b', 'c', 'd', 'e'].map((content) => ({ content, status: 'pending' as const }))
    expect(m.buildRecitation({ iteration: 1, todos: five })).toBe('**Todo Status**: 0 done, 0 active, 5 pending\n**Next**: a; b; c (+2 more)')
    const three = five.slice(0, 3)
    expect(m.buildRecitation({ iteration: 1, todos: three })).toContain('**Remaining**: a; b; c')
  })

  it('returns null when nothing is there to recite', () => {
    expect(m.buildRecitation({ iteration: 1 })).toBeNull()
    expect(m.buildRecitation({ iteration: 1, todos: [], memories: [] })).toBeNull()
    expect(m.buildRecitation({ iteration: 1, goal: '' })).toBeNull()
    const custom = new RecitationManager({ sources: ['custom'], customBuilder: () => null })
    expect(custom.buildRecitation({ iteration: 1, goal: 'g' })).toBeNull()
  })

  it('uses only the configured sources, plus files and errors always', () => {
    const goalOnly = new RecitationManager({ sources: ['goal'] })
    expect(goalOnly.buildRecitation({ iteration: 1, goal: 'G', todos, active_files: ['a.ts'] })).toBe('**Goal**: G\n\n**Active files**: a.ts')
    const custom = new RecitationManager({ sources: ['custom'], customBuilder: (s) => `Custom at ${s.iteration}` })
    expect(custom.buildRecitation({ iteration: 9 })).toBe('Custom at 9')
  })

  it('keeps items on one line', () => {
    expect(m.buildRecitation({ iteration: 1, goal: 'a\nb\r\n**Goal**: evil' })).toBe('**Goal**: a b **Goal**: evil')
  })

  it('truncates to max_tokens with the marker, measured with the tokenizer', () => {
    const small = new RecitationManager({ max_tokens: 10 })
    const out = small.buildRecitation({ iteration: 1, goal: 'Build a REST API '.repeat(20) })!
    expect(out.endsWith('\n...[truncated]')).toBe(true)
    expect(countTokens(out)).toBeLessThanOrEqual(10)
    expect(out.startsWith('**Goal**: Build')).toBe(true)
  })

  it('property: the recitation never exceeds max_tokens and token_estimate is exact', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 40 })
    const status = fc.constantFrom('pending', 'in_progress', 'completed') as fc.Arbitrary<'pending'>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120 }),
        fc.record({
          iteration: fc.integer({ min: 1, max: 100 }),
          goal: fc.option(text, { nil: undefined }),
          plan_tasks: fc.option(fc.array(fc.record({ description: text, status }), { maxLength: 6 }), { nil: undefined }),
          todos: fc.option(fc.array(fc.record({ content: text, status }), { maxLength: 8 }), { nil: undefined }),
          memories: fc.option(fc.array(text, { maxLength: 5 }), { nil: undefined }),
          active_files: fc.option(fc.array(text, { maxLength: 4 }), { nil: undefined }),
          recent_errors: fc.option(fc.array(text, { maxLength: 4 }), { nil: undefined }),
        }),
        fc.option(text, { nil: undefined }),
        (max_tokens, state, custom) => {
          const mgr = new RecitationManager({ max_tokens, sources: [...all], customBuilder: () => custom })
          const block = mgr.buildBlock(state)
          if (block === null) return
          expect(countTokens(block.content)).toBe(block.token_estimate)
          expect(block.token_estimate).toBeLessThanOrEqual(max_tokens)
          expect(block.text).toBe(`[Current Status - Iteration ${state.iteration}]\n${block.content}`)
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('injectIfNeeded (notes §1.4)', () => {
  const state = { iteration: 15, goal: 'Implement user authentication with JWT tokens' }
  const msgs: ChatMessage[] = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'first' },
    { role: 'assistant', content: 'ok', tool_calls: [] },
    { role: 'user', content: 'second', name: 'bob' },
    { role: 'tool', content: 'result' },
  ]

  it('inserts a system message just before the last user message and keeps the originals', () => {
    const m = new RecitationManager({ clock: fixed })
    const snapshot = structuredClone(msgs)
    const out = m.injectIfNeeded(msgs, state)
    expect(out).not.toBe(msgs)
    expect(out).toHaveLength(msgs.length + 1)
    expect(out[3]).toEqual({
      role: 'system',
      content: '[Current Status - Iteration 15]\n**Goal**: Implement user authentication with JWT tokens',
    })
    expect(out[4]).toBe(msgs[3])
    expect(out[2]).toBe(msgs[2])
    expect(msgs).toEqual(snapshot)
    expect(m.getHistory()).toEqual([
      {
        iteration: 15,
        timestamp: '2026-01-02T03:04:05.000Z',
        content: '**Goal**: Implement user authentication with JWT tokens',
        sources: ['goal'],
      },
    ])
  })

  it('appends when there is no user message, also to an empty list', () => {
    const m = new RecitationManager()
    const out = m.injectIfNeeded([{ role: 'system', content: 's' }], { iteration: 1, goal: 'g' })
    expect(out.map((x) => x.role)).toEqual(['system', 'system'])
    expect(new RecitationManager().injectIfNeeded([], { iteration: 1, goal: 'g' })).toHaveLength(1)
  })

  it('returns the same array when not due or without content, without recording', () => {
    const m = new RecitationManager({ frequency: 5 })
    const events: RecitationEvent[] = []
    m.on((e) => events.push(e))
    expect(m.injectIfNeeded(msgs, { iteration: 1 })).toBe(msgs)
    expect(m.lastInjectionIteration).toBe(0)
    m.injectIfNeeded(msgs, { iteration: 1, goal: 'g' })
    expect(m.injectIfNeeded(msgs, { iteration: 3, goal: 'g' })).toBe(msgs)
    expect(events.map((e) => e.type + ('reason' in e ? `:${e.reason}` : ''))).toEqual(['recitation.skipped:no_content', 'recitation.built', 'recitation.injected', 'recitation.skipped:not_due'])
    const built = events[1] as Extract<RecitationEvent, { type: 'recitation.built' }>
    expect(built.token_estimate).toBeGreaterThan(0)
  })

  it('forceInject ignores the schedule; listeners can unsubscribe and cannot break it', () => {
    const m = new RecitationManager({ frequency: 50 })
    m.injectIfNeeded([], { iteration: 1, goal: 'g' })
    let seen = 0
    const off = m.on(() => seen++)
    m.on(() => {
      throw new Error('boom')
    })
    expect(m.forceInject(msgs, { iteration: 2, goal: 'g' })).toHaveLength(msgs.length + 1)
    expect(seen).toBe(2)
    off()
    m.forceInject(msgs, { iteration: 3, goal: 'g' })
    expect(seen).toBe(2)
    expect(m.lastInjectionIteration).toBe(3)
  })

  it('history: copies, bounded at 100, cleared with the schedule; off when track_history is false', () => {
    const m = new RecitationManager({ frequency: 1 })
    for (let i = 1; i <= 120; i++) m.injectIfNeeded([], { iteration: i, goal: 'g' })
    const h = m.getHistory()
    expect(h).toHaveLength(RECITATION_HISTORY_LIMIT)
    expect(h[0]!.iteration).toBe(21)
    h[0]!.content = 'changed'
    expect(m.getHistory()[0]!.content).toBe('**Goal**: g')
    m.clearHistory()
    expect(m.getHistory()).toEqual([])
    expect(m.lastInjectionIteration).toBe(0)
    const quiet = new RecitationManager({ track_history: false })
    quiet.injectIfNeeded([], { iteration: 1, goal: 'g' })
    expect(quiet.getHistory()).toEqual([])
  })

  it('property: a JSON round trip changes no later decision or output', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<number | 'adaptive'>(1, 3, 5, 'adaptive'),
        fc.array(fc.record({ iteration: fc.integer({ min: 1, max: 60 }), ctx: fc.integer({ min: 0, max: 80_000 }) }), {
          minLength: 1,
          maxLength: 10,
        }),
        (frequency, steps) => {
          const a = new RecitationManager({ frequency, clock: fixed })
          const half = Math.ceil(steps.length / 2)
          const run = (mgr: RecitationManager, s: (typeof steps)[number]) => mgr.inject([{ role: 'user', content: 'u' }], { iteration: s.iteration, goal: 'g', context_tokens: s.ctx })
          steps.slice(0, half).forEach((s) => run(a, s))
          const b = RecitationManager.fromJSON(JSON.parse(JSON.stringify(a.toJSON())), { clock: fixed })
          for (const s of steps.slice(half)) expect(run(b, s)).toEqual(run(a, s))
          expect(b.toJSON()).toEqual(a.toJSON())
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe('countTokensByLines', () => {
  it('property: equals the whole-text count on newline-rich text', () => {
    const piece = fc.oneof(
      fc.constantFrom('\n', '\n\n', ' \n', '\r\n', '/', '**', ' ', '.', ')', '-', '\t', '<|endoftext|>', 'é', '1'),
      fc.string({ unit: 'grapheme', maxLength: 8 }),
      fc.constantFrom('Goal', 'todo', 'Next', 'src/a.ts', '(+2 more)'),
    )
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join('')
        expect(countTokensByLines(text)).toBe(countTokens(text))
      }),
      { numRuns: 2000 },
    )
  })
})
