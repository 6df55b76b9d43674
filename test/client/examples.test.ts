/** The examples/ scripts run as a reader runs them (mock model, no OpenAI variables) against a live server. */
import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import { liveServer } from './live-server.js'

const ROOT = resolve(import.meta.dirname, '../..')

async function runExample(file: string, env: Record<string, string>): Promise<string> {
  const { OPENAI_BASE_URL: _u, OPENAI_API_KEY: _k, ...rest } = process.env
  const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=goalkeeper-source', '--import', 'tsx', file], {
    cwd: ROOT,
    env: { ...rest, ...env },
    timeout: 60_000,
  })
  return stdout
}

it.each([
  ['examples/ai-sdk-agent.ts', 'stopped after 6 steps; last verdict: replan'],
  ['examples/openai-agents-agent.ts', 'stopped by goalkeeper: ToolInputGuardrailTripwireTriggered; last verdict: replan'],
])(
  '%s stops the scripted drifting agent',
  async (file, last) => {
    const { baseUrl, agent } = await liveServer()
    const out = await runExample(file, { GOALKEEPER_URL: baseUrl, GOALKEEPER_API_KEY: agent.apiKey })
    const lines = out.trim().split('\n')
    expect(lines.slice(0, 6).map((l) => l.split(':')[1]?.trim().split(' ')[0])).toEqual(['continue', 'continue', 'adjust', 'adjust', 'adjust', 'replan'])
    expect(lines.at(-1)).toBe(last)
  },
  90_000,
)
