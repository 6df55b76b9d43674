import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { claudeCodeOrSkip, ClaudeProject, HOOK_EVENTS, httpHooks, type RunOptions } from './claude-code.js'
import { lastText, startFakeAnthropic, textOf, type FakeOptions, type MessagesRequest } from './fake-anthropic.js'
import { say, useTool } from './turns.js'
import { startHookServer, type HookAnswer, type HookCall } from './hook-server.js'

/**
 * The real Claude Code binary against a hook endpoint written here (goalkeeper's own route has
 * its scenario tests): what it POSTs, and what each answer shape does to the model's next
 * request. test/hooks/README.md writes the findings out.
 */
const bin = await claudeCodeOrSkip()

const KEY = 'gk_test_0123456789abcdef0123456789abcdef'
/** With these the binary offers TodoWrite (the default model of this version has no todo tool). */
const TODO_WRITE_ENV = { CLAUDE_CODE_ENABLE_TODO_TOOLS: '1', CLAUDE_CODE_ENABLE_TASKS: 'false' }
const TIMEOUT = 60_000

const ctx = (event: string, text: string) => ({ hookSpecificOutput: { hookEventName: event, additionalContext: text } })
/** The texts of the `system`-role messages of a request: where this version puts hook context. */
const systemTexts = (r: MessagesRequest) => r.messages.filter((m) => m.role === 'system').map((m) => textOf({ ...r, messages: [m] }))

describe.skipIf(bin === undefined)('the Claude Code binary with http hooks', () => {
  const cleanups: (() => unknown)[] = []
  afterEach(async () => {
    for (const clean of cleanups.splice(0).reverse()) await clean()
  })

  async function start(o: { events: string[]; answer?: (call: HookCall) => HookAnswer; model: FakeOptions; timeout?: number; url?: string; otherHooks?: object }) {
    const hooks = await startHookServer(o.answer)
    cleanups.push(() => hooks.close())
    const model = await startFakeAnthropic(o.model)
    cleanups.push(() => model.close())
    const hook = {
      url: o.url ?? `${hooks.url}/v1/hooks/claude-code`,
      headers: { Authorization: 'Bearer $GOALKEEPER_API_KEY' },
      allowedEnvVars: ['GOALKEEPER_API_KEY'],
      ...(o.timeout ? { timeout: o.timeout } : {}),
    }
    const project = new ClaudeProject(bin!, model.url, { hooks: { ...httpHooks(o.events, hook), ...o.otherHooks }, allowedHttpHookUrls: ['http://127.0.0.1:*/*'] })
    cleanups.push(() => project.remove())
    const run = (prompt: string, options: RunOptions = {}) => project.run(prompt, { ...options, env: { GOALKEEPER_API_KEY: KEY, ...options.env } })
    return { hooks, model, project, run }
  }

  it('POSTs each event as JSON with the key from allowedEnvVars; the payloads carry the session, the tool calls and their results', { timeout: TIMEOUT }, async () => {
    const { hooks, project, run } = await start({
      events: [...HOOK_EVENTS],
      model: {
        script: [
          useTool('TodoWrite', { todos: [{ content: 'Read the notes', status: 'in_progress', activeForm: 'Reading the notes' }] }),
          useTool('Bash', { command: 'ls /no-such-dir', description: 'List a missing folder' }),
          useTool('Read', { file_path: 'notes.txt' }),
          say('All done.'),
        ],
      },
    })
    writeFileSync(join(project.dir, 'notes.txt'), 'line one\n')
    const result = await run('Read the notes', { env: TODO_WRITE_ENV })
    expect(result.exitCode, result.stderr).toBe(0)

    // http hooks never run for SessionStart or Setup (the binary skips them: command hooks only).
    expect(hooks.events()).toEqual([
      'UserPromptSubmit',
      'PreToolUse',
      'PostToolUse',
      'PostToolBatch',
      'PreToolUse',
      'PostToolUseFailure',
      'PostToolBatch',
      'PreToolUse',
      'PostToolUse',
      'PostToolBatch',
      'MessageDisplay',
      'Stop',
      'SessionEnd',
    ])
    for (const call of hooks.calls) {
      expect(call).toMatchObject({ method: 'POST', path: '/v1/hooks/claude-code', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` } })
      expect(call.body).toMatchObject({ session_id: result.sessionId, cwd: project.dir, transcript_path: expect.stringContaining(result.sessionId!) })
    }
    const [prompt, preTodo, postTodo, preBash, failBash, postRead, stop, end] = [0, 1, 2, 4, 5, 8, 11, 12].map(hooks.body)
    const [todoId, bashId] = [hooks.body(1).tool_use_id, hooks.body(4).tool_use_id]
    expect(prompt).toMatchObject({ prompt: 'Read the notes', permission_mode: 'bypassPermissions' })
    expect(preTodo).toMatchObject({ tool_name: 'TodoWrite', tool_input: { todos: [{ content: 'Read the notes', status: 'in_progress' }] }, tool_use_id: expect.any(String) })
    expect(postTodo).toMatchObject({ tool_name: 'TodoWrite', tool_response: { oldTodos: [], newTodos: [{ content: 'Read the notes' }] }, tool_use_id: todoId })
    expect(preBash).toMatchObject({ tool_name: 'Bash', tool_input: { command: 'ls /no-such-dir' } })
    expect(failBash).toMatchObject({ tool_name: 'Bash', error: expect.stringMatching(/^Exit code 2\n.*No such file/s), is_interrupt: false, tool_use_id: bashId })
    expect(postRead).toMatchObject({ tool_name: 'Read', tool_input: { file_path: join(project.dir, 'notes.txt') }, tool_response: { file: { content: 'line one\n' } } })
    expect(stop).toMatchObject({ stop_hook_active: false, last_assistant_message: 'All done.' })
    expect(end).toMatchObject({ reason: 'other' })
  })

  it('UserPromptSubmit additionalContext reaches the model after the prompt, on the first prompt and on a resumed one', { timeout: TIMEOUT }, async () => {
    const { hooks, model, run } = await start({
      events: ['UserPromptSubmit'],
      answer: (call) => ctx('UserPromptSubmit', `Goal reminder for: ${String(call.body.prompt)}`),
      model: { script: [say('One.'), say('Two.')] },
    })
    const first = await run('Write the report')
    const second = await run('Now add a summary', { resume: first.sessionId })
    expect(second.sessionId).toBe(first.sessionId)
    expect(hooks.calls.map((c) => c.body.session_id)).toEqual([first.sessionId, first.sessionId])

    const [one, two] = [model.turn(0), model.turn(1)]
    // First prompt: appended to the system-role message that follows the user's prompt.
    expect(one.messages.map((m) => m.role)).toEqual(['user', 'system'])
    expect(systemTexts(one).join()).toContain('UserPromptSubmit hook additional context: Goal reminder for: Write the report')
    // A resumed prompt: a system-role message of its own, right after the prompt.
    expect(two.messages.at(-2)).toMatchObject({ role: 'user', content: 'Now add a summary' })
    expect(two.messages.at(-1)?.role).toBe('system')
    expect(lastText(two)).toBe('UserPromptSubmit hook additional context: Goal reminder for: Now add a summary')
  })

  it('PostToolUse and PostToolUseFailure additionalContext follow the tool result in the next request', { timeout: TIMEOUT }, async () => {
    const { model, run } = await start({
      events: ['PostToolUse', 'PostToolUseFailure'],
      answer: (call) => ctx(call.body.hook_event_name, `Advice after ${call.body.hook_event_name}`),
      model: { script: [useTool('Bash', { command: 'false', description: 'Fail' }), useTool('Bash', { command: 'true', description: 'Pass' }), say('Done.')] },
    })
    expect((await run('Go')).exitCode).toBe(0)
    const [afterFailure, afterSuccess] = [model.turn(1), model.turn(2)]
    expect(afterFailure.messages.at(-2)?.content).toMatchObject([{ type: 'tool_result', is_error: true }])
    expect(afterFailure.messages.at(-1)?.role).toBe('system')
    expect(lastText(afterFailure)).toBe('PostToolUseFailure:Bash hook additional context: Advice after PostToolUseFailure')
    expect(lastText(afterSuccess)).toBe('PostToolUse:Bash hook additional context: Advice after PostToolUse')
  })

  it('PreToolUse permissionDecision deny: the tool never runs, and the model reads the reason as its result', { timeout: TIMEOUT }, async () => {
    const { hooks, model, project, run } = await start({
      events: ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'],
      answer: (call) =>
        call.body.hook_event_name === 'PreToolUse' && call.body.tool_name === 'Bash'
          ? { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'The same failing call, a third time: try another way.' } }
          : undefined,
      model: { script: [useTool('Bash', { command: 'touch made.txt', description: 'Make a file' }), useTool('Read', { file_path: 'notes.txt' }), say('Stopped.')] },
    })
    writeFileSync(join(project.dir, 'notes.txt'), 'x\n')
    expect((await run('Go')).exitCode).toBe(0)
    expect(existsSync(join(project.dir, 'made.txt'))).toBe(false)
    // Neither PostToolUse nor PostToolUseFailure follows a denied call; the next tool is not denied.
    expect(hooks.calls.map((c) => `${c.body.hook_event_name}:${String(c.body.tool_name)}`)).toEqual(['PreToolUse:Bash', 'PreToolUse:Read', 'PostToolUse:Read'])
    expect(model.turn(1).messages.at(-1)?.content).toMatchObject([
      { type: 'tool_result', is_error: true, content: 'PreToolUse:Bash hook error: The same failing call, a third time: try another way.' },
    ])
  })

  it('Stop decision block: the model gets another turn with the reason, and the next Stop says stop_hook_active', { timeout: TIMEOUT }, async () => {
    let stops = 0
    const { hooks, model, run } = await start({
      events: ['Stop'],
      answer: () => (stops++ === 0 ? { decision: 'block', reason: 'Two todos are still open: write the tests; update the docs.' } : undefined),
      model: { script: [say('Finished.'), say('Now really finished.')] },
    })
    const result = await run('Go')
    expect(result.result?.result).toBe('Now really finished.')
    expect(hooks.calls.map((c) => c.body.stop_hook_active)).toEqual([false, true])
    const again = model.turn(1)
    expect(again.messages.at(-2)).toMatchObject({
      role: 'user',
      content: expect.stringContaining('Stop hook feedback:\nTwo todos are still open: write the tests; update the docs.\n</system-reminder>'),
    })
    expect(lastText(again)).toMatch(/^Stop hook blocking error from command: "http:\/\/127\.0\.0\.1:\d+\/v1\/hooks\/claude-code": Two todos are still open/)
  })

  it('PostToolUse decision block: the reason reaches the model after the tool result (the tool has run)', { timeout: TIMEOUT }, async () => {
    const { model, project, run } = await start({
      events: ['PostToolUse'],
      answer: () => ({ decision: 'block', reason: 'That edit left the plan behind.' }),
      model: { script: [useTool('Bash', { command: 'touch made.txt', description: 'Make a file' }), say('Done.')] },
    })
    expect((await run('Go')).exitCode).toBe(0)
    expect(existsSync(join(project.dir, 'made.txt'))).toBe(true)
    expect(lastText(model.turn(1))).toMatch(/^PostToolUse:Bash hook blocking error from command: "http:[^"]+": That edit left the plan behind\.$/)
  })

  it('fails open: a 500, a body that is not JSON, a timed-out or an unreachable hook change nothing', { timeout: TIMEOUT }, async () => {
    const deny = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'MARK' } })
    const answers: Record<string, HookAnswer> = {
      UserPromptSubmit: { status: 200, body: 'MARK: not JSON' },
      PreToolUse: { status: 500, body: deny },
      PostToolUse: { status: 200, delayMs: 2_500, body: JSON.stringify(ctx('PostToolUse', 'MARK')) },
      Stop: { status: 503, body: JSON.stringify({ decision: 'block', reason: 'MARK' }) },
    }
    const script = () => [useTool('Bash', { command: 'touch made.txt', description: 'Make a file' }), say('Done.')]
    const broken = await start({ events: Object.keys(answers), answer: (call) => answers[call.body.hook_event_name], model: { script: script() }, timeout: 1 })
    const result = await broken.run('Go')
    expect(result.result?.result).toBe('Done.')
    expect(broken.hooks.events()).toEqual(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'])
    expect(existsSync(join(broken.project.dir, 'made.txt'))).toBe(true)
    expect(broken.model.main().map((r) => JSON.stringify(r.body.messages).includes('MARK'))).toEqual([false, false])

    const closed = await closedPort()
    const unreachable = await start({ events: Object.keys(answers), model: { script: script() }, url: `http://127.0.0.1:${closed}/v1/hooks/claude-code` })
    expect((await unreachable.run('Go')).result?.result).toBe('Done.')
    expect(existsSync(join(unreachable.project.dir, 'made.txt'))).toBe(true)
  })

  it('compaction: PreCompact and PostCompact reach http hooks; SessionStart (command hooks only) says compact, and resume', { timeout: TIMEOUT }, async () => {
    const sessionStarts = 'session-start.jsonl'
    // A command hook: it records its input and answers additionalContext, as a `curl` to goalkeeper would.
    const command = `(cat; echo) >> ${sessionStarts}; echo '${JSON.stringify(ctx('SessionStart', 'Recitation: the goal and the plan'))}'`
    let full = 0
    const { hooks, model, project, run } = await start({
      events: ['PreCompact', 'PostCompact'],
      otherHooks: { SessionStart: [{ hooks: [{ type: 'command', command }] }] },
      model: {
        script: [useTool('Bash', { command: 'true', description: 'Pass' }), say('Done.'), say('Again.')],
        // The first answer reports nearly the whole context window: the binary compacts before its next request.
        inputTokens: () => (full++ === 0 ? 990_000 : 1_000),
      },
    })

    const first = await run('Go')
    expect(first.result?.result).toBe('Done.')
    expect(hooks.calls.map((c) => c.body)).toMatchObject([
      { hook_event_name: 'PreCompact', trigger: 'auto', session_id: first.sessionId },
      { hook_event_name: 'PostCompact', trigger: 'auto', compact_summary: expect.any(String) },
    ])
    const kinds = model.requests.map((r) => r.kind)
    expect(kinds).toEqual(['main', 'compact', 'main'])
    expect(systemTexts(model.turn(1)).join()).toContain('SessionStart hook additional context: Recitation: the goal and the plan')

    await run('Once more', { resume: first.sessionId })
    const starts = readFileSync(join(project.dir, sessionStarts), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(starts.map((s) => s.source)).toEqual(['startup', 'compact', 'resume'])
    expect(starts.every((s) => s.session_id === first.sessionId)).toBe(true)
  })
})

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}
