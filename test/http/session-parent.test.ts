import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { createSession, GOAL } from './sessions-fixtures.js'

describe("a sub-agent's session names its parent", () => {
  it('parent_id links a session to another of the same agent, lists the children, and counts both in the daily budget', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const parent = await createSession(t, a)
    const child = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: 'Write the tests for the user endpoints', parent_id: parent } })
    expect(child.statusCode).toBe(201)
    expect(child.json()).toMatchObject({ parent_id: parent })
    expect((await t.app.inject({ url: `/v1/sessions/${parent}`, headers: a.headers })).json().parent_id).toBeNull()
    const listed = await t.app.inject({ url: `/v1/sessions?parent_id=${parent}`, headers: a.headers })
    expect(listed.json().items.map((s: { id: string }) => s.id)).toEqual([child.json().id])

    // Another agent's session, or none, is not a parent: 400 naming the field, nothing written.
    const b = await t.createAgent('b')
    for (const parent_id of [await createSession(t, b), 'ses_nope']) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, parent_id } })
      expect(res.statusCode).toBe(400)
      expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(['body/parent_id'])
    }
    expect((await t.app.inject({ url: '/v1/sessions', headers: a.headers })).json().items).toHaveLength(2)

    // The agent's day counts the parent's steps and the sub-agent's alike.
    await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: a.headers, payload: { daily_budget: { cost_usd: 1 } } })
    const step = (id: string, cost_usd: number) => t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: a.headers, payload: { description: 'design the user schema', cost_usd } })
    await step(parent, 0.6)
    expect((await step(child.json().id, 0.5)).json().verification).toMatchObject({ recommended_action: 'abort', agent_budget: { cost_usd: 1.1 } })
  })
})
