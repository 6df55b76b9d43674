import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { textKey } from '../../src/engine/detection/step-keys.js'
import { GoalSession, type StepSignals } from '../../src/engine/index.js'
import { measuredInOwnProcess } from './heap.js'

const GOAL = 'Book the cheapest business class round trip from New York to San Francisco for the customer'
const clock = () => Date.UTC(2026, 10, 22, 9)

type Step = { d: string; o?: string } & StepSignals
const call = (name: string, args: Record<string, unknown>, o = 'ok', extra: StepSignals = {}): Step => ({ d: `${name}(${JSON.stringify(args)})`, o, tool: { name, args }, ...extra })

function run(config: Record<string, unknown>, steps: Step[]) {
  const s = new GoalSession({ goal: GOAL, config }, { clock })
  return steps.map((x) => s.step(x.d, x.o ?? '', undefined, { ...x, ...(x.tool ? { tool: x.tool } : {}) }))
}

/** The index of the first step whose verdict names a loop of `kind`, or -1. */
const firstLoop = (results: ReturnType<typeof run>, kind: string) => results.findIndex((r) => r.verification.loop?.kind === kind)

const ALL = { loop_kinds: ['repeat', 'error_repeat', 'alternation', 'monologue', 'same_call'] }
/** The answers of a session stored without the detection fields: the immediate table and keyword alignment. */
const IMMEDIATE = { escalation: 'immediate', alignment: 'keywords' } as const

describe('loop kinds', () => {
  it("repeat: GoalTracker's rule, the same step state the 3rd time, with the steps involved", () => {
    const r = run(IMMEDIATE, [{ d: 'search flights', o: 'none' }, { d: 'think' }, { d: 'search flights', o: 'none' }, { d: 'search flights', o: 'none' }])
    expect(firstLoop(r, 'repeat')).toBe(3)
    expect(r[3]!.verification.loop).toMatchObject({ kind: 'repeat', steps: [1, 3, 4], count: 3 })
    expect(r[3]!.verification.recommended_action).toBe('replan')
  })

  it('error_repeat: the same call failing the same way 3 times, other steps between allowed, caught on the 3rd failure', () => {
    const fail = call('book_reservation', { flight: 'HAT001', paid: 1625 }, 'Error: payment amount does not add up (request 2026-11-22T09:00:01Z)', { error: true })
    const steps = [fail, call('think', { thought: 'hmm' }), { ...fail, o: 'Error: payment amount does not add up (request 2026-11-22T09:00:07Z)' }, call('think', { thought: 'again' }), fail]
    const r = run({}, steps)
    expect(firstLoop(r, 'error_repeat')).toBe(4)
    expect(r[4]!.verification.loop!.steps).toEqual([1, 3, 5])
    expect(r[4]!.verification.loop!.advice).toMatch(/failed 3 times/)
    // A success of that call between failures breaks the run; so does a failure of another kind (the result moved).
    expect(firstLoop(run({}, [fail, fail, { ...fail, error: false, o: 'booked' }, fail]), 'error_repeat')).toBe(-1)
    expect(firstLoop(run({}, [fail, fail, { ...fail, o: 'Error: flight HAT001 is full' }, fail]), 'error_repeat')).toBe(-1)
  })

  it('same_call, when listed: the same tool and arguments 5 times whatever came back, argument order ignored', () => {
    const steps = [0, 1, 2, 3, 4].map((i) => call('get_reservation_details', i % 2 ? { id: 'X1', verbose: true } : { verbose: true, id: 'X1' }, `status ${i}`))
    const r = run({ loop_kinds: ['same_call'] }, steps)
    expect(r.slice(0, 4).every((x) => x.verification.loop === undefined)).toBe(true)
    expect(firstLoop(r, 'same_call')).toBe(4)
    expect(r[4]!.verification.loop!.steps).toEqual([1, 2, 3, 4, 5])
    // Different arguments are different calls.
    const other = run(
      { loop_kinds: ['same_call'] },
      [0, 1, 2, 3, 4].map((i) => call('get_reservation_details', { id: `X${i}` }, 'same')),
    )
    expect(firstLoop(other, 'same_call')).toBe(-1)
    // Off for a new session that lists no kinds: an answer that changes is polling or progress.
    expect(run({}, steps).every((x) => x.verification.loop === undefined)).toBe(true)
  })

  it('same_edit: the same edit 3 times in a row whatever came back; other calls between, or different edits, are not one', () => {
    const insert = { command: 'edit 1:1\npublic interface TypeClass<T> {}\nend_of_edit' }
    const grown = (n: number) => `[File: /repo/TypeClass.java (${n} lines total)]\n1:public interface TypeClass<T> {}`
    const edits = [3, 6, 9, 12].map((n) => call('edit', insert, grown(n)))
    const r = run({}, edits)
    expect(r.slice(0, 2).every((x) => x.verification.loop === undefined)).toBe(true)
    expect(r[2]!.verification.loop).toMatchObject({ kind: 'same_edit', steps: [1, 2, 3], count: 3 })
    expect(r[2]!.verification.loop!.advice).toMatch(/same edit .* was applied 3 times in a row/)
    // Claude Code's tools and OpenHands' editor commands are edits too; messages between do not break the run.
    const cc = (o: string) => call('Edit', { file_path: 'a.py', old_string: 'x', new_string: 'y', replace_all: true }, o)
    expect(firstLoop(run({}, [cc('1 replaced'), { d: 'again' }, cc('2 replaced'), cc('4 replaced')]), 'same_edit')).toBe(3)
    // Near misses: twice; a look between (the agent checked the file); the edit's arguments change; a read repeated with a changing answer.
    expect(firstLoop(run({}, edits.slice(0, 2)), 'same_edit')).toBe(-1)
    expect(firstLoop(run({}, [edits[0]!, edits[1]!, call('open', { command: 'open TypeClass.java' }, grown(6)), edits[2]!]), 'same_edit')).toBe(-1)
    expect(
      firstLoop(
        run(
          {},
          [1, 2, 3].map((i) => call('edit', { command: `edit ${i}:${i}\nx\nend_of_edit` }, grown(i))),
        ),
        'same_edit',
      ),
    ).toBe(-1)
    expect(
      firstLoop(
        run(
          {},
          [1, 2, 3, 4].map((i) => call('open', { command: 'open TypeClass.java' }, grown(i))),
        ),
        'same_edit',
      ),
    ).toBe(-1)
    // Off unless listed.
    expect(firstLoop(run({ loop_kinds: ['repeat'] }, edits), 'same_edit')).toBe(-1)
  })

  it('same_result: the same call with the same result (volatile parts masked) 3 times, edits between allowed', () => {
    const test = (o: string) => call('Bash', { command: 'python -m pytest tests/test_qdp.py' }, o)
    const edit = (i: number) => call('Edit', { file_path: 'qdp.py', old_string: `v${i}`, new_string: `v${i + 1}` })
    const failing = (t: string, pid: number) => `1 failed, 4 passed in ${t}s (pid ${pid}, /tmp/pytest-of-root/pytest-${pid}/t0)`
    const steps = [test(failing('0.42', 311)), edit(1), test(failing('0.39', 377)), edit(2), test(failing('1.07', 402))]
    const r = run({}, steps)
    expect(r.slice(0, 4).every((x) => x.verification.loop === undefined)).toBe(true)
    expect(r[4]!.verification.loop).toMatchObject({ kind: 'same_result', steps: [1, 3, 5], count: 3 })
    expect(r[4]!.verification.loop!.advice).toMatch(/same result 3 times/)
    // Near misses: the result moves (polling a build, a fix that changes the failure), or only twice alike.
    const moving = run({}, [test('3 failed'), edit(1), test('2 failed'), edit(2), test('2 failed'), edit(3), test('1 failed')])
    expect(firstLoop(moving, 'same_result')).toBe(-1)
    expect(firstLoop(run({}, steps.slice(0, 4)), 'same_result')).toBe(-1)
    // Off unless listed (a session that lists its kinds).
    expect(firstLoop(run({ loop_kinds: ['repeat'] }, steps), 'same_result')).toBe(-1)
  })

  it('polling: the same call whose output changes is not a loop until the output stops changing', () => {
    const poll = (o: string) => call('get_job_status', { job: 7 }, o)
    const r = run({ loop_kinds: ['same_result'] }, [
      poll('running 10%'),
      poll('running 40%'),
      poll('running 80%'),
      poll('done at 2026-11-22 09:00:01'),
      poll('done at 2026-11-22 09:00:05'),
      poll('done at 2026-11-22 09:00:09'),
    ])
    expect(r.slice(0, 5).every((x) => x.verification.loop === undefined)).toBe(true)
    expect(r[5]!.verification.loop).toMatchObject({ kind: 'same_result', steps: [4, 5, 6] })
  })

  it('error_cascade: 5 failed calls in a row across different calls; 4, or one call failing, is not one', () => {
    const failing = (i: number) => call('Bash', { command: `mvn -q test -Dcase=${i}` }, `bash: mvn: command not found (${i})`, { error: true })
    const r = run({}, [0, 1, 2, 3, 4].map(failing))
    expect(r.slice(0, 4).every((x) => x.verification.loop === undefined)).toBe(true)
    expect(r[4]!.verification.loop).toMatchObject({ kind: 'error_cascade', steps: [1, 2, 3, 4, 5], count: 5 })
    // A success in between breaks it; messages between do not.
    expect(firstLoop(run({}, [failing(0), failing(1), call('ls', {}), failing(2), failing(3), failing(4)]), 'error_cascade')).toBe(-1)
    expect(firstLoop(run({}, [failing(0), failing(1), { d: 'hmm' }, failing(2), failing(3), failing(4)]), 'error_cascade')).toBe(5)
    // The same call failing alike is error_repeat's, not a cascade.
    const same = call('Bash', { command: 'cd fastjson/' }, '/bin/bash: line 13008: cd: fastjson/: No such file or directory', { error: true })
    const alike = run(
      {},
      [0, 1, 2, 3, 4].map((i) => ({ ...same, o: `/bin/bash: line ${13008 + 15 * i}: cd: fastjson/: No such file or directory` })),
    )
    expect(alike.map((x) => x.verification.loop?.kind ?? null)).toEqual([null, null, 'error_repeat', 'error_repeat', 'error_repeat'])
  })

  it('alternation: A/B/A/B/A/B over 6 steps, only when the kind is on', () => {
    const a = call('search_direct_flight', { from: 'JFK', to: 'SFO' }, 'no flights')
    const b = call('search_onestop_flight', { from: 'JFK', to: 'SFO' }, 'no flights either')
    const steps = [a, b, a, b, a, b]
    expect(firstLoop(run({}, steps), 'alternation')).toBe(-1)
    const r = run(ALL, steps)
    expect(r.slice(0, 5).some((x) => x.verification.loop?.kind === 'alternation')).toBe(false)
    expect(r[5]!.verification.loop).toMatchObject({ kind: 'alternation', steps: [1, 2, 3, 4, 5, 6] })
    expect(run({ ...ALL, loop_thresholds: { alternation: 4 } }, steps).findIndex((x) => x.verification.loop?.kind === 'alternation')).toBe(3)
  })

  it('monologue: the same message 3 times with no action between, only when the kind is on', () => {
    const ask = { d: 'Could you please confirm the reservation id?', o: 'sure' }
    const steps = [ask, { ...ask, o: 'I said yes' }, { ...ask, o: 'yes!!' }]
    expect(firstLoop(run({}, steps), 'monologue')).toBe(-1)
    const r = run(ALL, steps)
    expect(firstLoop(r, 'monologue')).toBe(2)
    // A tool call between resets it.
    expect(firstLoop(run(ALL, [ask, call('think', {}), ask, ask]), 'monologue')).toBe(-1)
  })

  it('thresholds per kind: a higher one waits, a lower one fires earlier', () => {
    const c = call('get_status', { job: 1 }, 'running')
    expect(firstLoop(run({ loop_kinds: ['same_call'], loop_thresholds: { same_call: 3 } }, [c, { ...c, o: 'still running' }, { ...c, o: 'queued' }]), 'same_call')).toBe(2)
    const r = run({ loop_thresholds: { repeat: 4 } }, [{ d: 'x step' }, { d: 'x step' }, { d: 'x step' }, { d: 'x step' }])
    expect(r.map((x) => x.state.loop_detected)).toEqual([false, false, false, true])
  })

  it('an exempt tool is never flagged, whatever the kind, and does not break others', () => {
    const poll = call('get_job_status', { job: 7 }, 'running')
    const steps = Array.from({ length: 12 }, () => poll)
    const exempt = { ...ALL, loop_exempt_tools: ['get_job_status'] }
    const r = run(exempt, steps)
    expect(r.every((x) => x.verification.loop === undefined && !x.state.loop_detected)).toBe(true)
    // Without the exemption the same polling is a loop.
    expect(run(ALL, steps).some((x) => x.state.loop_detected)).toBe(true)
    // Polls between the calls of another tool are not in the window: that tool's loop is still caught.
    const other = call('fetch_log', { job: 7 }, 'log')
    const mixed = run(exempt, [poll, other, poll, other, poll, other, poll, other, poll, other])
    expect(mixed.findIndex((x) => x.verification.loop !== undefined)).toBe(5)
    expect(mixed[5]!.verification.loop).toMatchObject({ kind: 'repeat', steps: [2, 4, 6] })
    expect(mixed.filter((x) => x.verification.loop?.kind === 'same_call').map((x) => x.step_number)).toEqual([10])
  })

  it('loop_detection false turns every kind off', () => {
    const fail = call('pay', { amount: 1 }, 'Error', { error: true })
    const r = run({ ...ALL, loop_detection: false }, [fail, fail, fail, fail, fail, fail])
    expect(r.every((x) => !x.state.loop_detected && x.verification.loop === undefined)).toBe(true)
  })

  it("text-only steps get the tracker's answers with the immediate table and keyword alignment (no new field but the loop named)", () => {
    const texts = ['design the booking flow', 'browse cat pictures', 'browse cat pictures', 'browse cat pictures', 'book flight']
    const plain = new GoalSession({ goal: GOAL, config: IMMEDIATE }, { clock })
    const results = texts.map((d) => plain.step(d))
    expect(results.map((r) => r.verification.recommended_action)).toEqual(['continue', 'adjust', 'adjust', 'replan', 'replan'])
    expect(results.map((r) => Object.keys(r.verification).sort().join())).toEqual([
      ...Array(3).fill('aligned,alignment_score,drift_delta,progress_delta,reasoning,recommended_action'),
      'aligned,alignment_score,drift_delta,loop,progress_delta,reasoning,recommended_action',
      'aligned,alignment_score,drift_delta,progress_delta,reasoning,recommended_action',
    ])
  })

  it('the loop_detected event names the kind and the steps', () => {
    const fail = call('pay', { amount: 1 }, 'Error', { error: true })
    const s = new GoalSession({ goal: GOAL }, { clock })
    const events = [fail, fail, fail].flatMap((x) => s.step(x.d, x.o, undefined, { tool: x.tool!, error: true }).events)
    expect(events.filter((e) => e.type === 'loop_detected')).toEqual([{ type: 'loop_detected', data: { step_number: 3, loop_count: 1, description: fail.d, kind: 'error_repeat', steps: [1, 2, 3] } }])
  })

  it('rejects an unknown kind, a threshold out of range and a bad budget, naming the field', () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ loop_kinds: ['spin'] }, 'loop_kinds/0'],
      [{ loop_thresholds: { spin: 3 } }, 'loop_thresholds/spin'],
      [{ loop_thresholds: { alternation: 3 } }, 'loop_thresholds/alternation'],
      [{ budget: { tokens: -1 } }, 'budget/tokens'],
      [{ escalation: 'gentle' }, 'escalation'],
      [{ alignment: 'vibes' }, 'alignment'],
      [{ loop_thresholds: { error_cascade: 2 } }, 'loop_thresholds/error_cascade'],
    ]
    for (const [config, field] of bad) expect(() => new GoalSession({ goal: GOAL, config }), field).toThrow(expect.objectContaining({ field }))
  })

  it('a JSON round trip in the middle of a loop gives the same later verdicts', () => {
    const fail = call('pay', { amount: 1 }, 'Error', { error: true })
    const steps: Step[] = [call('a', {}), fail, call('b', {}), fail, call('a', {}), fail, fail, call('b', {})]
    const config: Record<string, unknown> = { ...ALL, escalation: 'graduated', budget: { tokens: 50 }, skip_unchanged: true }
    const straight = new GoalSession({ goal: GOAL, config }, { clock })
    const full = steps.map((x) => straight.step(x.d, x.o ?? '', undefined, { ...x, tokens: 5 }))
    const first = new GoalSession({ goal: GOAL, config }, { clock })
    steps.slice(0, 4).forEach((x) => first.step(x.d, x.o ?? '', undefined, { ...x, tokens: 5 }))
    const resumed = GoalSession.fromJSON(JSON.parse(JSON.stringify(first.toJSON())), { clock })
    const rest = steps.slice(4).map((x) => resumed.step(x.d, x.o ?? '', undefined, { ...x, tokens: 5 }))
    expect(rest).toEqual(full.slice(4))
  })
})

describe('the gate (a coding agent PreToolUse): the call that would complete a loop with nothing done between', () => {
  const poll = { name: 'Bash', args: { command: 'gh run view 42' } }
  const feed = (config: Record<string, unknown>, outputs: string[]) => {
    const s = new GoalSession({ goal: GOAL, config }, { clock })
    for (const o of outputs) s.step('Bash: gh run view 42', o, undefined, { tool: poll })
    return s
  }

  it('same_result: denied after N−1 identical calls in a row answered alike; not when the answer moved or something was done between', () => {
    expect(feed({}, ['queued', 'in progress (3.1s)', 'in progress (4.0s)']).gateTool(poll)).toMatch(/would make 3 identical calls in a row, and the last 2 were answered alike/)
    expect(feed({}, ['queued', 'in progress 10%', 'in progress 40%']).gateTool(poll)).toBeNull()
    const between = feed({}, ['in progress'])
    between.step('Edit ci.yml', '', undefined, { tool: { name: 'Edit', args: { file_path: 'ci.yml', old_string: 'a', new_string: 'b' } } })
    between.step('Bash: gh run view 42', 'in progress', undefined, { tool: poll })
    expect(between.gateTool(poll)).toBeNull()
    // Only under graduated escalation, and only with the kind on.
    expect(feed({ escalation: 'seed' }, ['in progress', 'in progress']).gateTool(poll)).toBeNull()
    expect(feed({ loop_kinds: ['error_repeat'] }, ['in progress', 'in progress']).gateTool(poll)).toBeNull()
  })

  it('same_call, when listed: the Nth identical call in a row whatever came back; off by default, so polling whose answer moves runs on', () => {
    const moving = ['10%', '20%', '30%', '40%']
    expect(feed({ loop_kinds: ['same_call'] }, moving).gateTool(poll)).toMatch(/would make 5 identical calls in a row/)
    expect(feed({}, moving).gateTool(poll)).toBeNull()
  })
})

describe("the loop window's keys", () => {
  it('are the text that snapshots have always stored (a window read back still matches new steps)', () => {
    // Written by the key's first form, `(h2 >>> 0).toString(36) + (h1 >>> 0).toString(36)`.
    expect(textKey('')).toBe('k4n83c7h0j2b')
    expect(textKey('Run the tests')).toBe('unz7241jfhne8')
    expect(textKey('  RUN   the\ttests ')).toBe('unz7241jfhne8')
    expect(textKey('édition Ünïcode ✓')).toBe('dedkba1ie4snh')
    expect(textKey('x'.repeat(500))).toBe('130aesn1aldl4j')
    expect(textKey('Run the tests', 'm:')).toBe('m:unz7241jfhne8')
  })

  it("a session's window of 20 steps holds under 6 KB of heap", () => {
    // In a process of its own, with the default kinds, texts as JSON.parse gives them (flat):
    // 5.3 KB; 6.6 KB when a key was built with `+`, a chain of three or four string objects.
    const module = (name: string) => JSON.stringify(fileURLToPath(new URL(`../../src/engine/detection/${name}.ts`, import.meta.url)))
    const perWindow = measuredInOwnProcess(`
      import { LoopDetector } from ${module('loops')}
      import { DEFAULT_LOOP_KINDS, DEFAULT_LOOP_THRESHOLDS } from ${module('loop-kinds')}
      const settings = { kinds: new Set(DEFAULT_LOOP_KINDS), thresholds: DEFAULT_LOOP_THRESHOLDS, exemptTools: new Set() }
      const all = new Array(500)
      gc(); const before = process.memoryUsage().heapUsed
      for (let s = 0; s < all.length; s++) {
        const d = new LoopDetector()
        for (let i = 0; i < 40; i++) d.observe(i, ...JSON.parse(JSON.stringify(['add the session store ' + i + ' of ' + s, 'ok ' + i])), {}, settings)
        all[s] = d
      }
      gc(); console.log((process.memoryUsage().heapUsed - before) / all.length)`)
    expect(perWindow).toBeGreaterThan(3000)
    expect(perWindow).toBeLessThan(6144)
  })
})
