import type { AddressInfo } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { stored } from '../http/otlp-fixtures.js'
import { claudeCodeOrSkip, ClaudeProject } from '../hooks/claude-code.js'
import { startFakeAnthropic } from '../hooks/fake-anthropic.js'
import { say, useTool, type Turn } from '../hooks/turns.js'

/**
 * The real Claude Code binary (test/hooks's pinned version, against the scripted fake model) with
 * nothing but its own telemetry pointed at goalkeeper: the environment variables the README gives.
 * What it sends is in ./README.md.
 */
const bin = await claudeCodeOrSkip()

const TIMEOUT = 90_000
const GOAL = 'Fix the off-by-one error in src/pagination.ts'

describe.skipIf(bin === undefined)("Claude Code's OpenTelemetry log events on goalkeeper", () => {
  const cleanups: (() => unknown)[] = []
  afterEach(async () => {
    for (const clean of cleanups.splice(0).reverse()) await clean()
  })

  async function run(script: Turn[], protocol: 'http/protobuf' | 'http/json', header: (key: string) => string) {
    const t = await buildTestApp()
    const agent = await t.createAgent()
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const endpoint = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/otlp`
    const model = await startFakeAnthropic({ script })
    cleanups.push(() => model.close())
    const project = new ClaudeProject(bin!, model.url, {})
    cleanups.push(() => project.remove())
    writeFileSync(join(project.dir, 'notes.md'), 'The bug is in the last page.\n')
    const result = await project.run(GOAL, {
      env: {
        CLAUDE_CODE_ENABLE_TELEMETRY: '1',
        OTEL_LOGS_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_HEADERS: `Authorization=${header(agent.apiKey)}`,
        OTEL_LOG_USER_PROMPTS: '1',
        OTEL_LOG_TOOL_DETAILS: '1',
        OTEL_LOGS_EXPORT_INTERVAL: '500',
      },
    })
    expect(result.exitCode, result.stderr).toBe(0)
    return { ...(await stored(t, agent, result.sessionId!)), model }
  }

  it('each tool call is a step of the session its prompt opened, with the cost of the request that made it; the repeated failure is a loop', { timeout: TIMEOUT }, async () => {
    const failing = useTool('Bash', { command: 'ls /no-such-dir/src/pagination.ts', description: 'Look for the file' })
    const { session, steps } = await run(
      [failing, failing, failing, useTool('Bash', { command: 'echo token=ghp_abcdefghijklmnopqrstuvwxyz0123456789', description: 'Echo' }), useTool('Read', { file_path: 'notes.md' }), say('Done.')],
      'http/protobuf',
      (key) => `Bearer%20${key}`,
    )
    expect(session).toMatchObject({ goal: GOAL, metadata: { source: 'otlp', service: 'claude-code' } })
    expect(steps.map((s) => [s.description, s.error])).toEqual([
      ['Bash: ls /no-such-dir/src/pagination.ts', true],
      ['Bash: ls /no-such-dir/src/pagination.ts', true],
      ['Bash: ls /no-such-dir/src/pagination.ts', true],
      ['Bash: echo token=[REDACTED]', false],
      [expect.stringMatching(/^Read \/.*\/notes\.md$/), false],
    ])
    // Each step carries the api_request before it: its tokens (with cache) and cost.
    for (const s of steps) {
      expect(s.tokens).toBeGreaterThan(0)
      expect(s.cost_usd).toBeGreaterThan(0)
    }
    expect(steps[2]!.verification.recommended_action).not.toBe('continue')
    expect(steps[2]!.verification.loop).toBeDefined()
  })

  it('sends OTLP/JSON as well, with the key header written with a plain space', { timeout: TIMEOUT }, async () => {
    const { session, steps } = await run(
      [useTool('Bash', { command: 'cat src/pagination.ts 2>/dev/null || true', description: 'Read it' }), say('Looked at it.')],
      'http/json',
      (key) => `Bearer ${key}`,
    )
    expect(session?.goal).toBe(GOAL)
    expect(steps.map((s) => [s.description, s.error])).toEqual([['Bash: cat src/pagination.ts 2>/dev/null || true', false]])
  })
})
