/**
 * The client package as it would be published: `npm run build` in client/ (tsc, declarations),
 * every path its exports name present, and the built code working against a live server.
 */
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { beforeAll, expect, it } from 'vitest'
import { GOAL, liveServer } from './live-server.js'

const CLIENT = resolve(import.meta.dirname, '../../client')
const pkg = JSON.parse(readFileSync(resolve(CLIENT, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> }

beforeAll(async () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: CLIENT, timeout: 170_000 })
}, 180_000)

it('emits every file its exports name', () => {
  for (const [entry, targets] of Object.entries(pkg.exports)) {
    for (const [condition, target] of Object.entries(targets)) {
      if (condition === 'goalkeeper-source') continue
      expect(existsSync(resolve(CLIENT, target)), `${entry} → ${target}`).toBe(true)
    }
  }
})

it('works from its built files', async () => {
  const { Goalkeeper, GoalkeeperError } = (await import(resolve(CLIENT, 'dist/index.js'))) as typeof import('@goalkeeper/client')
  const { goalkeeperAi } = (await import(resolve(CLIENT, 'dist/adapters/ai-sdk.js'))) as typeof import('@goalkeeper/client/ai')
  const { baseUrl, agent } = await liveServer()
  const client = new Goalkeeper({ baseUrl, apiKey: agent.apiKey })
  const session = await client.sessions.create({ goal: GOAL })
  const step = await client.sessions.step(session.id, { description: 'design the user management REST API' })
  expect(step.step_number).toBe(1)
  await expect(client.sessions.get('ses_missing')).rejects.toBeInstanceOf(GoalkeeperError)
  expect(typeof goalkeeperAi({ client, sessionId: session.id }).wrap).toBe('function')
})
