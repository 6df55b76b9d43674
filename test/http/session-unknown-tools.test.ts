import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { createSession, GOAL } from './sessions-fixtures.js'

describe('unknown tools over HTTP', () => {
  it('names a call to a tool outside config.tools at once; PUT …/tools replaces the list; bad lists are a 400 naming the field', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a, { goal: GOAL, config: { tools: ['read_file', 'run_tests'] } })
    const step = (name: string) =>
      t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: a.headers, payload: { description: `call ${name}`, output: 'ok', tool: { name, args: { path: 'src/app.ts' } } } })
    const first = (await step('read_fil')).json()
    expect(first.verification).toMatchObject({ unknown_tool: { name: 'read_fil', similar: ['read_file'], count: 1 }, recommended_action: 'adjust' })
    expect((await step('read_file')).json().verification.unknown_tool).toBeUndefined()

    const put = (tools: unknown, headers = a.headers) => t.app.inject({ method: 'PUT', url: `/v1/sessions/${id}/tools`, headers, payload: { tools } })
    const reported = await put(['Read', 'Bash', 'mcp__github__*'])
    expect(reported.statusCode).toBe(200)
    expect(reported.json()).toEqual({ tools: ['Read', 'Bash', 'mcp__github__*'] })
    expect((await step('read_file')).json().verification.unknown_tool).toMatchObject({ name: 'read_file', similar: ['Read'] })
    expect((await step('mcp__github__get_issue')).json().verification.unknown_tool).toBeUndefined()

    for (const [tools, path] of [
      [['*'], 'body/tools/0'],
      [['Read', ''], 'body/tools/1'],
      [Array.from({ length: 1001 }, (_, i) => `t${i}`), 'body/tools'],
    ] as const) {
      const res = await put(tools)
      expect(res.statusCode, JSON.stringify(tools).slice(0, 40)).toBe(400)
      expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path)
    }
    const created = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, config: { tools: ['Read', '*'] } } })
    expect(created.statusCode).toBe(400)
    expect(created.json().errors.map((e: { path: string }) => e.path)).toContain('body/config/tools/1')
    // Another agent's session is a 404, and its list is untouched.
    const b = await t.createAgent('b')
    expect((await put(['Other'], b.headers)).statusCode).toBe(404)
    expect((await step('Bash')).json().verification.unknown_tool).toBeUndefined()
  })
})
