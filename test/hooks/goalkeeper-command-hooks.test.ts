import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { cliOrSkip } from './cli.js'
import { CODEX, CodexProject, commandHooks, GEMINI_CLI, GeminiProject } from './command-hook-clis.js'
import { itemText, startFakeOpenAI } from './fake-openai.js'
import { partText, startFakeGemini } from './fake-gemini.js'
import { say, useTool } from './turns.js'

/**
 * The real Codex CLI and Gemini CLI, their command hooks running the one-line `curl` the README
 * documents, on goalkeeper's routes: the same failing command three times brings goalkeeper's loop
 * advice into the model's next request, and the steps are stored on the CLI's session id.
 */
const [codex, gemini] = await Promise.all([cliOrSkip(CODEX), cliOrSkip(GEMINI_CLI)])
const TIMEOUT = 90_000

/** The README's hook command, for `url`. */
const documented = (url: string) => `curl -sf --max-time 4 -H "Authorization: Bearer $GOALKEEPER_API_KEY" -H 'content-type: application/json' --data-binary @- ${url} || true`

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean()
})

async function goalkeeper(): Promise<{ t: TestApp; agent: TestAgent; base: string }> {
  const t = await buildTestApp()
  const agent = await t.createAgent()
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  return { t, agent, base: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` }
}

async function stored(t: TestApp, agent: TestAgent, external: string) {
  const list = await t.app.inject({ url: `/v1/sessions?external_id=${external}`, headers: agent.headers })
  const session = list.json<{ items: { id: string; goal: string; metadata: { source: string } }[] }>().items[0]!
  const steps = await t.app.inject({ url: `/v1/sessions/${session.id}/steps`, headers: agent.headers })
  return { session, steps: steps.json<{ items: { description: string; error: boolean }[] }>().items }
}

it('the README documents the command these tests run', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  expect(readme).toContain(JSON.stringify(documented('http://127.0.0.1:8080/v1/hooks/codex')).slice(1, -1))
})

describe.skipIf(codex === undefined)('Codex CLI with goalkeeper as its hooks', () => {
  it('records exec calls as steps and denies the same failing command a third time, the model reading why', { timeout: TIMEOUT }, async () => {
    const { t, agent, base } = await goalkeeper()
    const fail = useTool('exec_command', { cmd: 'ls /no-such-dir/src/export.ts' })
    const model = await startFakeOpenAI([fail, fail, fail, say('I will look elsewhere.')])
    cleanups.push(() => model.close())
    const hooks = commandHooks(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'], documented(`${base}/v1/hooks/codex`), 15)
    const project = new CodexProject(codex!, model.url, hooks)
    cleanups.push(() => project.remove())
    const result = await project.run('Make the CSV export in src/export.ts stream rows', { GOALKEEPER_API_KEY: agent.apiKey })
    expect(result.exitCode, result.stderr).toBe(0)

    const { session, steps } = await stored(t, agent, result.sessionId!)
    expect(session).toMatchObject({ goal: 'Make the CSV export in src/export.ts stream rows', metadata: { source: 'codex' } })
    // The third identical call, after two answered alike, would complete a loop: denied, never run.
    expect(steps.map((s) => s.description)).toEqual(Array(2).fill('Bash: ls /no-such-dir/src/export.ts'))
    expect(itemText(model.request(3).input.at(-1)!)).toMatch(/^Command blocked by PreToolUse hook: goalkeeper: .* would make 3 identical calls in a row/)
  })
})

describe.skipIf(gemini === undefined)('Gemini CLI with goalkeeper as its hooks', () => {
  it('records shell calls with their exit codes and denies the same failing command a third time, the model reading why', { timeout: TIMEOUT }, async () => {
    const { t, agent, base } = await goalkeeper()
    const fail = useTool('run_shell_command', { command: 'ls /no-such-dir/src/orders.ts', description: 'Look for the file' })
    const model = await startFakeGemini([fail, fail, fail, say('I will look elsewhere.')])
    cleanups.push(() => model.close())
    const hooks = commandHooks(['BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent'], documented(`${base}/v1/hooks/gemini-cli`), 15_000)
    const project = new GeminiProject(gemini!, model.url, hooks)
    cleanups.push(() => project.remove())
    const result = await project.run('Add pagination to GET /orders in src/orders.ts', { GOALKEEPER_API_KEY: agent.apiKey })
    expect(result.exitCode, result.stderr).toBe(0)

    const { session, steps } = await stored(t, agent, result.sessionId!)
    expect(session).toMatchObject({ goal: 'Add pagination to GET /orders in src/orders.ts', metadata: { source: 'gemini-cli' } })
    // The third identical call, after two answered alike, would complete a loop: denied, never run.
    expect(steps.map((s) => [s.description, s.error])).toEqual(Array(2).fill(['run_shell_command: ls /no-such-dir/src/orders.ts', true]))
    expect(model.request(3).contents.at(-1)!.parts.map(partText).join('\n')).toContain('would make 3 identical calls in a row')
  })
})
