import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cliOrSkip } from './cli.js'
import { CODEX, CodexProject, commandHooks, forwardTo, GEMINI_CLI, GeminiProject } from './command-hook-clis.js'
import { itemText, startFakeOpenAI, type ResponsesRequest } from './fake-openai.js'
import { partText, startFakeGemini, type GeminiRequest } from './fake-gemini.js'
import { startHookServer, type HookAnswer, type HookCall } from './hook-server.js'
import { say, useTool, type Script } from './turns.js'

/**
 * The real Codex CLI and Gemini CLI, their command hooks forwarding to an endpoint written here:
 * what they send, and what each answer does to the model's next request (test/hooks/README.md).
 */
const [codex, gemini] = await Promise.all([cliOrSkip(CODEX), cliOrSkip(GEMINI_CLI)])
const TIMEOUT = 60_000

const ctx = (event: string, text: string) => ({ hookSpecificOutput: { hookEventName: event, additionalContext: text } })
const events = (calls: HookCall[]) => calls.map((c) => c.body.hook_event_name)

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean()
})

async function hookServer(answer?: (call: HookCall) => HookAnswer) {
  const hooks = await startHookServer(answer)
  cleanups.push(() => hooks.close())
  return hooks
}

describe.skipIf(codex === undefined)('Codex CLI with command hooks', () => {
  const CODEX_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'PreCompact', 'PostCompact', 'Stop', 'SubagentStart', 'SubagentStop', 'SessionEnd']

  async function start(script: Script<ResponsesRequest>, answer?: (call: HookCall) => HookAnswer) {
    const hooks = await hookServer(answer)
    const model = await startFakeOpenAI(script)
    cleanups.push(() => model.close())
    const project = new CodexProject(codex!, model.url, commandHooks(CODEX_EVENTS, forwardTo(`${hooks.url}/v1/hooks/codex`), 15))
    cleanups.push(() => project.remove())
    return { hooks, model, project }
  }
  const shell = (cmd: string) => useTool('exec_command', { cmd })

  it('sends each event on stdin; a failing command is a PostToolUse with its output', { timeout: TIMEOUT }, async () => {
    const { hooks, project } = await start([shell('ls /no-such-dir'), shell('echo hello'), say('All done.')])
    const result = await project.run('Run the checks')
    expect(result.exitCode, result.stderr).toBe(0)
    expect(events(hooks.calls)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'])
    for (const call of hooks.calls) expect(call.body).toMatchObject({ session_id: result.sessionId, cwd: project.dir, transcript_path: expect.any(String) })
    expect(hooks.body(0)).toMatchObject({ source: 'startup', model: 'gpt-5.5' })
    expect(hooks.body(1)).toMatchObject({ prompt: 'Run the checks', turn_id: expect.any(String) })
    expect(hooks.body(2)).toMatchObject({ tool_name: 'Bash', tool_input: { command: 'ls /no-such-dir' }, tool_use_id: expect.any(String) })
    expect(hooks.body(3)).toMatchObject({ tool_name: 'Bash', tool_response: expect.stringContaining('No such file or directory') })
    expect(hooks.body(6)).toMatchObject({ stop_hook_active: false, last_assistant_message: 'All done.' })
  })

  it('additionalContext from UserPromptSubmit and PostToolUse reaches the model as developer messages', { timeout: TIMEOUT }, async () => {
    const answer = (call: HookCall) => (['UserPromptSubmit', 'PostToolUse'].includes(call.body.hook_event_name) ? ctx(call.body.hook_event_name, `Advice on ${call.body.hook_event_name}`) : undefined)
    const { model, project } = await start([shell('true'), say('Done.')], answer)
    expect((await project.run('Go')).exitCode).toBe(0)
    const first = model.request(0).input
    expect(first.at(-2)).toMatchObject({ role: 'user' })
    expect(first.at(-1)).toMatchObject({ type: 'message', role: 'developer' })
    expect(itemText(first.at(-1)!)).toBe('Advice on UserPromptSubmit')
    const second = model.request(1).input
    expect(second.at(-2)).toMatchObject({ type: 'message', role: 'developer', content: [{ text: 'Advice on PostToolUse' }] })
    expect(second.at(-1)).toMatchObject({ type: 'function_call_output' })
  })

  it('PreToolUse deny: the command never runs, and its output is the reason', { timeout: TIMEOUT }, async () => {
    const deny = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'The same failing call again.' } }
    const { model, project } = await start([shell('touch made.txt'), say('Stopped.')], (call) => (call.body.hook_event_name === 'PreToolUse' ? deny : undefined))
    expect((await project.run('Go')).exitCode).toBe(0)
    expect(existsSync(join(project.dir, 'made.txt'))).toBe(false)
    expect(itemText(model.request(1).input.at(-1)!)).toBe('Command blocked by PreToolUse hook: The same failing call again.. Command: touch made.txt')
  })

  it('Stop decision block: another turn with the reason; the next Stop says stop_hook_active', { timeout: TIMEOUT }, async () => {
    let stops = 0
    const answer = (call: HookCall) => (call.body.hook_event_name === 'Stop' && stops++ === 0 ? { decision: 'block', reason: 'Two todos are open.' } : undefined)
    const { hooks, model, project } = await start([say('Finished.'), say('Now finished.')], answer)
    expect((await project.run('Go')).exitCode).toBe(0)
    expect(hooks.calls.filter((c) => c.body.hook_event_name === 'Stop').map((c) => c.body.stop_hook_active)).toEqual([false, true])
    expect(model.request(1).input.at(-1)).toMatchObject({ role: 'user', content: [{ text: expect.stringMatching(/^<hook_prompt hook_run_id="stop:[^"]+">Two todos are open\.<\/hook_prompt>$/) }] })
  })
})

describe.skipIf(gemini === undefined)('Gemini CLI with command hooks', () => {
  const GEMINI_EVENTS = ['SessionStart', 'BeforeAgent', 'BeforeModel', 'BeforeToolSelection', 'AfterModel', 'BeforeTool', 'AfterTool', 'AfterAgent', 'PreCompress', 'Notification', 'SessionEnd']
  const MODEL_EVENTS = ['BeforeModel', 'BeforeToolSelection', 'AfterModel', 'PreCompress']

  async function start(script: Script<GeminiRequest>, answer?: (call: HookCall) => HookAnswer) {
    const hooks = await hookServer(answer)
    const model = await startFakeGemini(script)
    cleanups.push(() => model.close())
    const project = new GeminiProject(gemini!, model.url, commandHooks(GEMINI_EVENTS, forwardTo(`${hooks.url}/v1/hooks/gemini-cli`), 15_000))
    cleanups.push(() => project.remove())
    return { hooks, model, project }
  }
  const shell = (command: string) => useTool('run_shell_command', { command, description: 'Run it' })
  const agentEvents = (calls: HookCall[]) => calls.filter((c) => !MODEL_EVENTS.includes(c.body.hook_event_name))

  it('sends each event on stdin; a failing command is an AfterTool with its exit code in the output', { timeout: TIMEOUT }, async () => {
    const { hooks, project } = await start([shell('ls /no-such-dir'), say('All done.')])
    const result = await project.run('Run the checks')
    expect(result.exitCode, result.stderr).toBe(0)
    const calls = agentEvents(hooks.calls)
    expect(events(calls)).toEqual(['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionEnd'])
    expect(hooks.events()).toEqual(expect.arrayContaining(MODEL_EVENTS))
    for (const call of hooks.calls) expect(call.body).toMatchObject({ session_id: result.sessionId, cwd: project.dir, timestamp: expect.any(String) })
    const [start_, before, beforeTool, afterTool, after, end] = calls.map((c) => c.body)
    expect(start_).toMatchObject({ source: 'startup' })
    expect(before).toMatchObject({ prompt: 'Run the checks' })
    expect(beforeTool).toMatchObject({ tool_name: 'run_shell_command', tool_input: { command: 'ls /no-such-dir' } })
    expect(afterTool).toMatchObject({ tool_name: 'run_shell_command', tool_response: { llmContent: expect.stringContaining('Exit Code: 2') } })
    expect(after).toMatchObject({ prompt: 'Run the checks', prompt_response: 'All done.', stop_hook_active: false })
    expect(end).toMatchObject({ reason: 'exit' })
  })

  it('additionalContext from BeforeAgent and AfterTool reaches the model as <hook_context>', { timeout: TIMEOUT }, async () => {
    const answer = (call: HookCall) => (['BeforeAgent', 'AfterTool'].includes(call.body.hook_event_name) ? ctx(call.body.hook_event_name, `Advice on ${call.body.hook_event_name}`) : undefined)
    const { model, project } = await start([shell('true'), say('Done.')], answer)
    expect((await project.run('Go')).exitCode).toBe(0)
    expect(model.request(0).contents.at(-1)?.parts.map(partText).slice(-2)).toEqual(['Go', '<hook_context>Advice on BeforeAgent</hook_context>'])
    expect(partText(model.request(1).contents.at(-1)!.parts[0]!)).toMatch(/\n\n<hook_context>Advice on AfterTool<\/hook_context>$/)
  })

  it('BeforeTool decision deny: the command never runs, and the model reads the reason as its error', { timeout: TIMEOUT }, async () => {
    const { model, project } = await start([shell('touch made.txt'), say('Stopped.')], (call) =>
      call.body.hook_event_name === 'BeforeTool' ? { decision: 'deny', reason: 'The same failing call again.' } : undefined,
    )
    expect((await project.run('Go')).exitCode).toBe(0)
    expect(existsSync(join(project.dir, 'made.txt'))).toBe(false)
    expect(model.request(1).contents.at(-1)?.parts[0]?.functionResponse?.response).toEqual({ error: 'Tool execution blocked: The same failing call again.' })
  })

  it('AfterAgent decision block: the reason is the next user turn; the next AfterAgent says stop_hook_active', { timeout: TIMEOUT }, async () => {
    let stops = 0
    const answer = (call: HookCall) => (call.body.hook_event_name === 'AfterAgent' && stops++ === 0 ? { decision: 'block', reason: 'Two todos are open.' } : undefined)
    const { hooks, model, project } = await start([say('Finished.'), say('Now finished.')], answer)
    expect((await project.run('Go')).exitCode).toBe(0)
    expect(hooks.calls.filter((c) => c.body.hook_event_name === 'AfterAgent').map((c) => c.body.stop_hook_active)).toEqual([false, true])
    expect(model.request(1).contents.at(-1)?.parts.map(partText)).toEqual(['Two todos are open.'])
  })
})
