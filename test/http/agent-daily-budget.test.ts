import { describe, expect, it } from 'vitest'
import { buildTestApp, subscribeToEvents, type TestAgent, type TestApp } from '../helpers.js'
import { createSession } from './sessions-fixtures.js'

/** An agent's daily budget across its sessions, on both databases: warnings, abort, events, the hooks' answers, a new day. */

let now = Date.UTC(2026, 10, 27, 9)
const clock = () => now

async function step(t: TestApp, a: TestAgent, id: string, cost_usd: number) {
  const res = await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: a.headers, payload: { description: 'design the user schema', cost_usd } })
  expect(res.statusCode, res.body).toBe(201)
  return res.json<{ verification: { recommended_action: string; reasoning: string; agent_budget?: { day: string; cost_usd: number; budget_fraction: number; crossed?: number[] } } }>().verification
}

const events = async (t: TestApp, type: string) =>
  (await t.db.all<{ payload: string }>('SELECT payload FROM webhook_messages WHERE event_type = ? ORDER BY created_at, id', [type])).map(
    (r) => (JSON.parse(r.payload) as { data: Record<string, unknown> }).data,
  )

describe("an agent's daily budget", () => {
  it('counts every session of the agent: a warning per threshold crossed, abort once spent, one exceeded event, a new day starts afresh', async () => {
    now = Date.UTC(2026, 10, 27, 9)
    const t = await buildTestApp({ clock })
    const a = await t.createAgent()
    await subscribeToEvents(t.db, a.id)
    const put = await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: a.headers, payload: { timezone: 'Europe/Berlin', daily_budget: { cost_usd: 1 } } })
    expect(put.json().daily_budget).toEqual({ cost_usd: 1 })
    const s1 = await createSession(t, a)
    const s2 = await createSession(t, a)
    expect((await step(t, a, s1, 0.3)).agent_budget).toEqual({ day: '2026-11-27', tokens: 0, cost_usd: 0.3, budget_fraction: 0.3 })
    const half = await step(t, a, s2, 0.25)
    expect(half.agent_budget).toMatchObject({ cost_usd: 0.55, crossed: [0.5], warning: 0.5 })
    expect(half.recommended_action).not.toBe('abort')
    expect(half.reasoning).toContain("the agent's daily budget is 55% spent: $0.55 of $1")
    await step(t, a, s1, 0.4)
    const spent = await step(t, a, s2, 0.1)
    expect(spent).toMatchObject({ recommended_action: 'abort', agent_budget: { budget_fraction: 1.05 } })
    expect(spent.reasoning).toContain("the agent's daily budget is spent: $1.05 of $1")
    expect((await step(t, a, s1, 0.01)).recommended_action).toBe('abort')
    expect((await events(t, 'agent.budget_warning')).map((e) => [e.threshold, e.session_id])).toEqual([
      [0.5, s2],
      [0.8, s1],
      [0.9, s1],
    ])
    expect(await events(t, 'agent.budget_exceeded')).toEqual([
      { session_id: s2, step_number: 2, day: '2026-11-27', tokens: 0, cost_usd: 1.05, budget_fraction: 1.05, reason: "the agent's daily budget is spent: $1.05 of $1" },
    ])
    // Another agent is not counted.
    const b = await t.createAgent('b')
    expect((await step(t, b, await createSession(t, b), 5)).recommended_action).not.toBe('abort')
    // Midnight in Berlin: a new day.
    now = Date.UTC(2026, 10, 27, 23, 30)
    expect((await step(t, a, s1, 0.1)).agent_budget).toEqual({ day: '2026-11-28', tokens: 0, cost_usd: 0.1, budget_fraction: 0.1 })
  })

  it('concurrent steps of several sessions cross each threshold exactly once', async () => {
    now = Date.UTC(2026, 10, 27, 9)
    const t = await buildTestApp({ clock })
    const a = await t.createAgent()
    await subscribeToEvents(t.db, a.id)
    await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: a.headers, payload: { daily_budget: { cost_usd: 1 } } })
    const ids = await Promise.all(Array.from({ length: 6 }, () => createSession(t, a)))
    await Promise.all(Array.from({ length: 24 }, (_, i) => step(t, a, ids[i % ids.length]!, 0.05)))
    expect((await events(t, 'agent.budget_warning')).map((e) => e.threshold).sort()).toEqual([0.5, 0.8, 0.9])
    expect(await events(t, 'agent.budget_exceeded')).toHaveLength(1)
  })

  it("a hook's PreToolUse is denied once the day is spent, a budget warning is context, not a deny; bad budgets are a 400 naming the field", async () => {
    now = Date.UTC(2026, 10, 27, 9)
    const t = await buildTestApp({ clock })
    const a = await t.createAgent()
    await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: a.headers, payload: { daily_budget: { tokens: 1000, warn_at: [0.5] } } })
    const hook = async (body: Record<string, unknown>) =>
      (await t.app.inject({ method: 'POST', url: '/v1/hooks/claude-code', headers: a.headers, payload: { session_id: 'cc-d', transcript_path: '/t', cwd: '/w', ...body } })).json()
    await hook({ hook_event_name: 'UserPromptSubmit', prompt: 'Fix the user pagination in src/users1.ts and src/users2.ts' })
    const read = (n: number) => ({ hook_event_name: 'PostToolUse', tool_name: 'Read', tool_input: { file_path: `src/users${n}.ts` }, tool_response: 'user schema '.repeat(300) })
    const first = await hook(read(1))
    expect(first.hookSpecificOutput.additionalContext).toMatch(/^goalkeeper \(step 1\): 50% of today's budget \(all your sessions\) is spent\./)
    expect(await hook({ hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: 'src/a.ts' } })).toEqual({})
    const last = await hook(read(2))
    expect(last.hookSpecificOutput.additionalContext).toContain("Today's budget for all your sessions is spent.")
    const denied = await hook({ hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: 'src/a.ts' } })
    expect(denied.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' })
    expect(denied.hookSpecificOutput.permissionDecisionReason).toMatch(/^goalkeeper: the agent's daily budget is spent: \d+ of 1000 tokens, so "Read/)

    for (const [daily_budget, path] of [
      [{ warn_at: [0.5] }, 'body/daily_budget'],
      [{ tokens: 0 }, 'body/daily_budget/tokens'],
      [{ cost_usd: 1, warn_at: [0.9, 0.8] }, 'body/daily_budget/warn_at/1'],
    ] as const) {
      const res = await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: a.headers, payload: { daily_budget } })
      expect(res.statusCode, JSON.stringify(daily_budget)).toBe(400)
      expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path)
    }
    // null removes it: the next call runs.
    await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: a.headers, payload: { daily_budget: null } })
    expect(await hook({ hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: 'src/a.ts' } })).toEqual({})
  })
})
