import { describe, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { GOAL } from './sessions-fixtures.js'

async function create(t: TestApp, a: TestAgent, config: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, config } })
}

const read = (i: number, cost_usd: number) => ({
  description: `Read part ${i}`,
  output: `lines ${i * 50}-${i * 50 + 49}`,
  tool: { name: 'Read', args: { file_path: 'src/notes.ts', offset: i * 50 } },
  cost_usd,
})

describe('reading past half the budget over HTTP', () => {
  it('a new session gets budget_stall; the 10th read in a row past half the budget answers replan, kept in the step log', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const res = await create(t, a, { budget: { cost_usd: 1 } })
    expect(res.statusCode).toBe(201)
    expect(res.json().config.budget_stall).toEqual({ at: 0.5, calls: 10 })
    const id = res.json().id as string
    const post = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: a.headers, payload })
    const test = await post({ description: 'run the tests', output: '3 passed, 1 failed', tool: { name: 'Bash', args: { command: 'npm test' } }, cost_usd: 0.5 })
    expect(test.json().verification.budget_stall).toBeUndefined()
    const verdicts = []
    for (let i = 0; i < 10; i++) verdicts.push((await post(read(i, 0.01))).json().verification)
    expect(verdicts.slice(0, 9).map((v) => v.budget_stall)).toEqual(Array(9).fill(undefined))
    expect(verdicts[9]).toMatchObject({ recommended_action: 'replan', budget_stall: { count: 10, since: 2, budget_fraction: 0.6 } })
    expect(verdicts[9].budget_stall.advice).toContain('60% of the budget is spent and the last 10 tool calls (since step 2) only read or searched')
    const log = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/steps?limit=100`, headers: a.headers })).json()
    expect(log.items.at(-1).verification.budget_stall).toEqual(verdicts[9].budget_stall)
  })

  it('budget_stall: false is stored and turns it off; bad values are a 400 naming the field', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const off = await create(t, a, { budget: { cost_usd: 1 }, budget_stall: false })
    expect(off.json().config.budget_stall).toBe(false)
    const id = off.json().id as string
    const verdicts = []
    for (let i = 0; i < 12; i++) verdicts.push((await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: a.headers, payload: read(i, 0.06) })).json().verification)
    expect(verdicts.every((v) => v.budget_stall === undefined)).toBe(true)
    const custom = await create(t, a, { budget_stall: { calls: 6 } })
    expect(custom.json().config.budget_stall).toEqual({ calls: 6 })
    for (const [budget_stall, path] of [
      [{ at: 1 }, 'body/config/budget_stall/at'],
      [{ at: 0 }, 'body/config/budget_stall/at'],
      [{ calls: 2 }, 'body/config/budget_stall/calls'],
      [{ calls: 1.5 }, 'body/config/budget_stall/calls'],
      [{ after: 3 }, 'body/config/budget_stall/after'],
      [true, 'body/config/budget_stall'],
    ] as const) {
      const res = await create(t, a, { budget_stall })
      expect(res.statusCode, JSON.stringify(budget_stall)).toBe(400)
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(
        res.json().errors.map((e: { path: string }) => e.path),
        JSON.stringify(budget_stall),
      ).toContain(path)
    }
  })
})
