import { describe, expect, it } from 'vitest'
import { buildTestApp, subscribeToEvents, type TestAgent, type TestApp } from '../helpers.js'

/**
 * POST /v1/hooks/claude-code with the event JSON Claude Code's http hooks send (test/hooks/README.md
 * has real payloads). The real binary against these routes: test/hooks/claude-code-binary.test.ts.
 */

const base = (session: string) => ({ session_id: session, transcript_path: '/tmp/t.jsonl', cwd: '/work/project', permission_mode: 'default' })

function hook(t: TestApp, agent: TestAgent, query = '') {
  return async (body: Record<string, unknown>) => {
    const res = await t.app.inject({ method: 'POST', url: `/v1/hooks/claude-code${query}`, headers: agent.headers, payload: body })
    expect(res.statusCode, res.body).toBe(200)
    return res.json<Record<string, unknown> & { hookSpecificOutput?: Record<string, string>; decision?: string; reason?: string }>()
  }
}

const prompt = (session: string, text: string) => ({ ...base(session), hook_event_name: 'UserPromptSubmit', prompt: text })
const post = (session: string, tool_name: string, tool_input: object, tool_response: unknown) => ({
  ...base(session),
  hook_event_name: 'PostToolUse',
  tool_name,
  tool_input,
  tool_response,
  tool_use_id: 'toolu_1',
})
const failed = (session: string, tool_name: string, tool_input: object, error: string) => ({
  ...base(session),
  hook_event_name: 'PostToolUseFailure',
  tool_name,
  tool_input,
  error,
  tool_use_id: 'toolu_1',
})
const pre = (session: string, tool_name: string, tool_input: object) => ({ ...base(session), hook_event_name: 'PreToolUse', tool_name, tool_input, tool_use_id: 'toolu_1' })
const stop = (session: string, active = false) => ({ ...base(session), hook_event_name: 'Stop', stop_hook_active: active })
const todos = (session: string, items: [string, 'pending' | 'in_progress' | 'completed'][]) =>
  post(session, 'TodoWrite', { todos: items.map(([content, status]) => ({ content, status, activeForm: content })) }, { oldTodos: [], newTodos: [] })

async function sessionOf(t: TestApp, agent: TestAgent, external: string) {
  const res = await t.app.inject({ url: `/v1/sessions?external_id=${encodeURIComponent(external)}`, headers: agent.headers })
  const items = res.json<{ items: { id: string; goal: string; config: Record<string, unknown>; external_id: string; plan: string[]; state: { progress: number } }[] }>().items
  return items[0]
}

async function stepsOf(t: TestApp, agent: TestAgent, id: string) {
  const res = await t.app.inject({ url: `/v1/sessions/${id}/steps`, headers: agent.headers })
  return res.json<{ items: { description: string; output: string; tool?: { name: string; args: Record<string, unknown> }; error?: boolean; verification: { recommended_action: string } }[] }>().items
}

const GOAL = 'Fix the off-by-one error in src/pagination.ts so the last page of GET /items is not empty'

describe('Claude Code hooks', () => {
  it('opens a session at the first prompt, keyed by the session id, and records each tool call as a step', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const send = hook(t, a)
    expect(await send({ ...base('cc-1'), hook_event_name: 'SessionStart', source: 'startup' })).toEqual({})
    expect(await sessionOf(t, a, 'cc-1')).toBeUndefined()
    expect(await send(prompt('cc-1', GOAL))).toEqual({})
    const s = (await sessionOf(t, a, 'cc-1'))!
    expect(s).toMatchObject({ goal: GOAL, external_id: 'cc-1', config: { escalation: 'graduated', skip_unchanged: true } })

    expect(await send(pre('cc-1', 'Read', { file_path: '/work/project/src/pagination.ts' }))).toEqual({})
    expect(
      await send(
        post(
          'cc-1',
          'Read',
          { file_path: '/work/project/src/pagination.ts' },
          { type: 'text', file: { filePath: 'src/pagination.ts', content: 'export function lastPage(n, size) { return Math.floor(n / size) }' } },
        ),
      ),
    ).toEqual({})
    expect(await send(failed('cc-1', 'Bash', { command: 'npm test -- pagination' }, 'Exit code 1\nexpected 3, got 2'))).toEqual({})
    const steps = await stepsOf(t, a, s.id)
    expect(steps.map((x) => [x.description, x.tool?.name, x.error])).toEqual([
      ['Read /work/project/src/pagination.ts', 'Read', false],
      ['Bash: npm test -- pagination', 'Bash', true],
    ])
    expect(steps[0]!.output).toContain('Math.floor(n / size)')
    expect(steps[1]!.output).toContain('expected 3, got 2')

    // A binary file's bytes and a broken surrogate pair come as they are: mended, not refused.
    expect(await send(post('cc-1', 'Bash', { command: 'head -c 8 src/pagination.ts' }, { stdout: '\u0089PNG\u0000\u0000 \ud83d end', stderr: '' }))).toEqual({})
    expect((await stepsOf(t, a, s.id))[2]!.output).toBe('\u0089PNG\ufffd\ufffd \ufffd end')

    // Another agent's events with the same session id open its own session, never this one.
    const b = await t.createAgent('b')
    await hook(t, b)(prompt('cc-1', 'Write the release notes'))
    expect((await sessionOf(t, b, 'cc-1'))!.id).not.toBe(s.id)
    expect(await stepsOf(t, a, s.id)).toHaveLength(3)
  })

  it('answers a repeated failing command with loop advice, and says nothing while the verdict is continue', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const send = hook(t, a)
    await send(prompt('cc-2', GOAL))
    const answers = []
    for (let i = 0; i < 3; i++) answers.push(await send(failed('cc-2', 'Bash', { command: 'npm run build' }, 'error TS2307: Cannot find module ./pagination.js')))
    expect(answers.slice(0, 2)).toEqual([{}, {}])
    const ctx = answers[2]!.hookSpecificOutput!
    expect(ctx.hookEventName).toBe('PostToolUseFailure')
    expect(ctx.additionalContext).toMatch(/^goalkeeper \(step 3, adjust\): "Bash\(\{"command":"npm run build"\}\)" failed 3 times in a row/)
  })

  it('denies the call that would complete a loop with nothing done between, a loop that goes on after replan, and every call after an abort until the user speaks', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const send = hook(t, a)
    await send(prompt('cc-3', GOAL))
    // Polling whose answer changes is not a loop: never denied, however often.
    const poll = { command: 'gh run watch 42 --exit-status # pagination fix' }
    for (let i = 0; i < 6; i++) {
      expect(await send(pre('cc-3', 'Bash', poll))).toEqual({})
      await send(post('cc-3', 'Bash', poll, { stdout: `run 42 (pagination): in progress, ${i * 15}%`, stderr: '' }))
    }
    // Once its answer stops changing, the third identical call in a row is denied (same_result).
    await send(post('cc-3', 'Bash', poll, { stdout: 'run 42 (pagination): in progress, 90% (3.1s)', stderr: '' }))
    expect(await send(pre('cc-3', 'Bash', poll))).toEqual({})
    await send(post('cc-3', 'Bash', poll, { stdout: 'run 42 (pagination): in progress, 90% (4.2s)', stderr: '' }))
    const denied = (await send(pre('cc-3', 'Bash', poll))).hookSpecificOutput!
    expect(denied).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' })
    expect(denied.permissionDecisionReason).toContain('would make 3 identical calls in a row, and the last 2 were answered alike')
    expect(await send(pre('cc-3', 'Read', { file_path: 'src/pagination.ts' }))).toEqual({})
    // The same edit twice in a row: the third is denied (same_edit), whatever it answered.
    const edit = { file_path: '/work/project/src/pagination.ts', old_string: 'Math.floor', new_string: 'Math.ceil', replace_all: true }
    for (let i = 1; i <= 2; i++) await send(post('cc-3', 'Edit', edit, { filePath: edit.file_path, structuredPatch: [{ oldStart: 3 * i, lines: [`-${i}`] }] }))
    expect((await send(pre('cc-3', 'Edit', edit))).hookSpecificOutput!.permissionDecisionReason).toContain('would apply the same edit 3 times in a row')
    expect(await send(pre('cc-3', 'Edit', { ...edit, new_string: 'Math.round' }))).toEqual({})

    // The same command failing the same way: adjust, then replan; trying it again is denied.
    await send(prompt('cc-3', 'Run npx tsc and fix the errors it reports'))
    const check = { command: 'npx tsc --noEmit' }
    const actions = []
    for (let i = 0; i < 4; i++) actions.push((await send(failed('cc-3', 'Bash', check, 'src/a.ts(1,1): error TS2304'))).hookSpecificOutput?.additionalContext?.match(/, (\w+)\):/)?.[1])
    expect(actions).toEqual([undefined, undefined, 'adjust', 'replan'])
    expect((await send(pre('cc-3', 'Bash', check))).hookSpecificOutput!.permissionDecisionReason).toContain('repeats a loop you were already told to replan')
    // The agent runs it anyway (another route, a permission prompt): replan once more, then abort, and then nothing runs.
    expect((await send(failed('cc-3', 'Bash', check, 'src/a.ts(1,1): error TS2304'))).hookSpecificOutput!.additionalContext).toContain(', replan): ')
    expect((await send(failed('cc-3', 'Bash', check, 'src/a.ts(1,1): error TS2304'))).hookSpecificOutput!.additionalContext).toContain(', abort): ')
    expect((await send(pre('cc-3', 'Read', { file_path: 'src/a.ts' }))).hookSpecificOutput!.permissionDecisionReason).toContain('answered "abort"')
    // Until the user speaks.
    await send(prompt('cc-3', 'Declare the missing type in src/types.ts instead'))
    expect(await send(pre('cc-3', 'Read', { file_path: 'src/types.ts' }))).toEqual({})
  })

  it('makes the todo list the plan, asks a stopping agent to finish open items (at most max_stop_blocks times) and reports the stop', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    await subscribeToEvents(t.db, a.id)
    const send = hook(t, a, '?max_stop_blocks=2')
    await send(prompt('cc-4', GOAL))
    await send(
      todos('cc-4', [
        ['Reproduce the empty last page', 'completed'],
        ['Fix lastPage in src/pagination.ts', 'in_progress'],
        ['Add a regression test', 'pending'],
      ]),
    )
    const s = (await sessionOf(t, a, 'cc-4'))!
    expect(s.plan).toEqual(['Reproduce the empty last page', 'Fix lastPage in src/pagination.ts', 'Add a regression test'])
    expect(s.state.progress).toBeCloseTo(1 / 3)

    const first = await send(stop('cc-4'))
    expect(first.decision).toBe('block')
    expect(first.reason).toContain('2 items of your plan are still open: 1. Fix lastPage in src/pagination.ts; 2. Add a regression test')
    expect((await send(stop('cc-4', true))).decision).toBe('block')
    // The cap (2 per user prompt) is reached: the agent may stop, and the stop is reported.
    expect(await send(stop('cc-4', true))).toEqual({})
    // A new prompt is a new turn; once every item is done the stop goes through.
    await send(prompt('cc-4', 'Also make sure the README example still works'))
    await send(
      todos('cc-4', [
        ['Reproduce the empty last page', 'completed'],
        ['Fix lastPage in src/pagination.ts', 'completed'],
        ['Add a regression test', 'completed'],
      ]),
    )
    expect((await sessionOf(t, a, 'cc-4'))!.state.progress).toBe(1)
    expect(await send(stop('cc-4'))).toEqual({})
    const events = await t.db.all<{ payload: string }>("SELECT payload FROM webhook_messages WHERE event_type = 'session.stopped' ORDER BY created_at, id")
    expect(events.map((e) => (JSON.parse(e.payload) as { data: { outcome: string; open_items: string[] } }).data)).toEqual([
      expect.objectContaining({ session_id: s.id, external_id: 'cc-4', outcome: 'open_items', open_items: ['Fix lastPage in src/pagination.ts', 'Add a regression test'] }),
      expect.objectContaining({ session_id: s.id, external_id: 'cc-4', outcome: 'done', open_items: [] }),
    ])
  })

  it('joins a later prompt to the goal and answers it with the goal reminder; a compaction gets the recitation', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const send = hook(t, a)
    await send(prompt('cc-5', GOAL))
    await send(post('cc-5', 'Read', { file_path: 'src/pagination.ts' }, 'export function lastPage() {}'))
    const later = await send(prompt('cc-5', 'Then add rate limiting to the login endpoint with a 429 and Retry-After'))
    expect(later.hookSpecificOutput).toMatchObject({ hookEventName: 'UserPromptSubmit' })
    expect(later.hookSpecificOutput!.additionalContext).toContain(`[GOAL: ${GOAL}`)
    const s = (await sessionOf(t, a, 'cc-5'))!
    expect(s.goal).toBe(`${GOAL}\n\nThen: Then add rate limiting to the login endpoint with a 429 and Retry-After`)
    // The user's redirection is on-goal: a step about it is aligned.
    await send(post('cc-5', 'Edit', { file_path: 'src/login.ts', old_string: 'login(', new_string: 'rateLimited(login)(' }, 'Added rate limiting with 429 and Retry-After to login'))
    const steps = await stepsOf(t, a, s.id)
    expect(steps.at(-1)!.verification.recommended_action).toBe('continue')

    // Over http Claude Code sends PostCompact, which takes no context: the next answer that can carries the recitation, once.
    expect(await send({ ...base('cc-5'), hook_event_name: 'PostCompact', trigger: 'auto', compact_summary: 'Summary of the work so far' })).toEqual({})
    const next = await send(post('cc-5', 'Read', { file_path: 'src/login.ts' }, 'export function login() {}'))
    expect(next.hookSpecificOutput!.additionalContext).toMatch(/^\[Current Status - Iteration \d+\]\n\*\*Goal\*\*: Fix the off-by-one/)
    expect(await send(post('cc-5', 'Read', { file_path: 'src/login.test.ts' }, 'login rate limiting test'))).toEqual({})
    // A SessionStart command hook forwarded here gets it at once.
    const compact = await send({ ...base('cc-5'), hook_event_name: 'SessionStart', source: 'compact' })
    expect(compact.hookSpecificOutput!.hookEventName).toBe('SessionStart')
    expect(compact.hookSpecificOutput!.additionalContext).toMatch(/^\[Current Status - Iteration \d+\]\n\*\*Goal\*\*: Fix the off-by-one/)
  })

  it('accepts any event and field, refuses a body that is no hook event, and fails open', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const send = hook(t, a)
    expect(await send({ ...base('cc-6'), hook_event_name: 'SomeFutureEvent', anything: { nested: [1, 2] } })).toEqual({})
    expect(await send({ ...base('cc-6'), hook_event_name: 'Notification', message: 'Claude needs your permission' })).toEqual({})
    for (const payload of [{ hook_event_name: 'Stop' }, { session_id: 'x' }, [1, 2]]) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/hooks/claude-code', headers: a.headers, payload })
      expect(res.statusCode).toBe(400)
      expect(res.headers['content-type']).toContain('application/problem+json')
    }
    const malformed = await t.app.inject({ method: 'POST', url: '/v1/hooks/claude-code', headers: { ...a.headers, 'content-type': 'application/json' }, payload: '{"hook_event_name":' })
    expect(malformed.statusCode).toBe(400)
    expect((await t.app.inject({ method: 'POST', url: '/v1/hooks/claude-code', payload: prompt('cc-6', GOAL) })).statusCode).toBe(401)

    t.app.services.hooks.handle = () => Promise.reject(new Error('database is gone'))
    expect(await send(prompt('cc-6', GOAL))).toEqual({})
    const metrics = await t.app.inject({ url: '/metrics' })
    expect(metrics.body).toMatch(/goalkeeper_hook_failures_total\{client="claude-code"\} 1/)
  })
})
