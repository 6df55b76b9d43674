import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { claudeCodeOrSkip, ClaudeProject, httpHooks, type RunOptions } from './claude-code.js'
import { lastText, startFakeAnthropic, textOf, type MessagesRequest } from './fake-anthropic.js'
import { say, useTool, type Turn } from './turns.js'

/**
 * The real Claude Code binary with its http hooks on goalkeeper's own route, goalkeeper listening
 * on 127.0.0.1 and the model a scripted fake: each scenario is asserted on what the model
 * receives and on the steps goalkeeper stored.
 */
const bin = await claudeCodeOrSkip()

const TIMEOUT = 90_000
/** The events docs/hooks.md and the README configure. */
const EVENTS = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostCompact', 'Stop']
/** With these this version offers TodoWrite (its default model has no todo tool). */
const TODO_WRITE_ENV = { CLAUDE_CODE_ENABLE_TODO_TOOLS: '1', CLAUDE_CODE_ENABLE_TASKS: 'false' }

describe.skipIf(bin === undefined)('Claude Code with goalkeeper as its hooks', () => {
  const cleanups: (() => unknown)[] = []
  afterEach(async () => {
    for (const clean of cleanups.splice(0).reverse()) await clean()
  })

  async function setUp(script: Turn[] | ((request: MessagesRequest, index: number) => Turn), hookUrl?: string) {
    const t = await buildTestApp()
    const agent = await t.createAgent()
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const url = hookUrl ?? `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/hooks/claude-code`
    const model = await startFakeAnthropic({ script })
    cleanups.push(() => model.close())
    const hook = { url, timeout: 5, headers: { Authorization: 'Bearer $GOALKEEPER_API_KEY' }, allowedEnvVars: ['GOALKEEPER_API_KEY'] }
    const project = new ClaudeProject(bin!, model.url, { hooks: httpHooks(EVENTS, hook), allowedHttpHookUrls: ['http://127.0.0.1:*/*'] })
    cleanups.push(() => project.remove())
    const run = (prompt: string, options: RunOptions = {}) => project.run(prompt, { ...options, env: { GOALKEEPER_API_KEY: agent.apiKey, ...options.env } })
    return { t, agent, model, project, run }
  }

  async function steps(t: TestApp, agent: TestAgent, external: string) {
    const list = await t.app.inject({ url: `/v1/sessions?external_id=${external}`, headers: agent.headers })
    const session = list.json<{ items: { id: string; goal: string }[] }>().items[0]!
    const res = await t.app.inject({ url: `/v1/sessions/${session.id}/steps`, headers: agent.headers })
    return { session, steps: res.json<{ items: { description: string; error: boolean; tool: { name: string }; verification: { recommended_action: string } }[] }>().items }
  }

  it('records each tool call as a step, and denies the same failing command a third time, the model reading why', { timeout: TIMEOUT }, async () => {
    const failing = useTool('Bash', { command: 'ls /no-such-dir/src/pagination.ts', description: 'Look for the file' })
    const { t, agent, model, run } = await setUp([failing, failing, failing, say('I will look elsewhere.')])
    const result = await run('Fix the off-by-one error in src/pagination.ts')
    expect(result.exitCode, result.stderr).toBe(0)

    const { session, steps: recorded } = await steps(t, agent, result.sessionId!)
    expect(session.goal).toBe('Fix the off-by-one error in src/pagination.ts')
    expect(recorded.map((s) => [s.tool.name, s.description, s.error])).toEqual(Array(2).fill(['Bash', 'Bash: ls /no-such-dir/src/pagination.ts', true]))
    // Nothing said after the first two failures; the third would complete a loop (the same call
    // answered alike twice): it is denied, never run, and the model reads why.
    expect(textOf(model.turn(1))).not.toContain('hook additional context')
    expect(textOf(model.turn(2))).not.toContain('hook additional context')
    expect(lastText(model.turn(3))).toMatch(/PreToolUse:Bash hook error: goalkeeper: "Bash\(.*" would make 3 identical calls in a row/)
  })

  it('brings the goal back when the user resumes with a second prompt', { timeout: TIMEOUT }, async () => {
    const { model, run } = await setUp([useTool('Bash', { command: 'cat src/pagination.ts 2>/dev/null || true', description: 'Read it' }), say('Looked at it.'), say('Will do.')])
    const first = await run('Fix the off-by-one error in src/pagination.ts')
    expect(first.exitCode, first.stderr).toBe(0)
    const second = await run('Also add a regression test for the last page', { resume: first.sessionId })
    expect(second.sessionId).toBe(first.sessionId)
    const resumed = model.turn(2)
    expect(lastText(resumed)).toContain('UserPromptSubmit hook additional context: [GOAL: Fix the off-by-one error in src/pagination.ts')
    expect(lastText(resumed)).toContain('Then: Also add a regression test for the last page')
  })

  it('asks the model to finish the open todo items when it stops, and lets it stop once they are done', { timeout: TIMEOUT }, async () => {
    const todo = (second: 'pending' | 'completed') =>
      useTool('TodoWrite', {
        todos: [
          { content: 'Reproduce the empty last page', status: 'completed', activeForm: 'Reproducing' },
          { content: 'Add a regression test', status: second, activeForm: 'Adding a test' },
        ],
      })
    const { t, agent, model, run } = await setUp([todo('pending'), say('Done.'), todo('completed'), say('Now done.')])
    const result = await run('Fix the off-by-one error in src/pagination.ts', { env: TODO_WRITE_ENV })
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.result?.result).toBe('Now done.')
    // After "Done." the model was told what is still open, and carried on.
    expect(textOf(model.turn(2))).toContain('Stop hook feedback:\ngoalkeeper: 1 item of your plan is still open: 1. Add a regression test.')
    expect(model.main()).toHaveLength(4)
    const list = await t.app.inject({ url: `/v1/sessions?external_id=${result.sessionId}`, headers: agent.headers })
    expect(list.json<{ items: { plan: string[]; state: { progress: number } }[] }>().items[0]).toMatchObject({ state: { progress: 1 } })
  })

  it('after an abort the next tool call is denied and never runs', { timeout: TIMEOUT }, async () => {
    // The same failing call until goalkeeper answers abort (a copy with a comment added when the
    // repeat is denied after its replan), then a call that must never run, then the end.
    let retries = 0
    const fail = () => useTool('Bash', { command: `ls /no-such-dir/src/pagination.ts ${'#'.repeat(retries++)}`, description: 'Look for the file' })
    const { project, model, run } = await setUp((request, i) => {
      const last = lastText(request)
      if (i > 15 || last.includes('touch marker.txt')) return say('Stopping.')
      if (last.includes(', abort): ')) return useTool('Bash', { command: 'touch marker.txt', description: 'Mark' })
      return last.includes('hook error: goalkeeper') ? fail() : useTool('Bash', { command: 'ls /no-such-dir/src/pagination.ts', description: 'Look for the file' })
    })
    const result = await run('Fix the off-by-one error in src/pagination.ts')
    expect(result.exitCode, result.stderr).toBe(0)
    expect(existsSync(join(project.dir, 'marker.txt'))).toBe(false)
    const denied = model
      .main()
      .map((r) => lastText(r.body))
      .find((text) => text.includes('touch marker.txt') || text.includes('answered "abort"'))
    expect(denied).toContain('PreToolUse:Bash hook error: goalkeeper: the last step was answered "abort"')
  })

  it('goalkeeper down: the agent runs on as if there were no hooks', { timeout: TIMEOUT }, async () => {
    const { project, run } = await setUp([useTool('Bash', { command: 'touch made.txt', description: 'Make a file' }), say('Made it.')], 'http://127.0.0.1:9/v1/hooks/claude-code')
    const result = await run('Make the file')
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.result?.result).toBe('Made it.')
    expect(existsSync(join(project.dir, 'made.txt'))).toBe(true)
  })
})
