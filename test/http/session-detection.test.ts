import { describe, expect, it } from 'vitest'
import { buildTestApp, subscribeToEvents, type TestAgent, type TestApp } from '../helpers.js'
import { sharedDatabase } from '../sessions/shared-database.js'
import { createSession, GOAL, PLAN } from './sessions-fixtures.js'

const clock = () => Date.UTC(2026, 10, 22, 9)

const ALL_KINDS = ['repeat', 'error_repeat', 'alternation', 'monologue', 'same_call']

async function step(t: TestApp, a: TestAgent, id: string, payload: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: a.headers, payload })
}

const failing = { description: 'create the user table', output: 'Error: table users already exists', tool: { name: 'sql', args: { q: 'CREATE TABLE users' } }, error: true }

describe('loops, escalation and budgets over HTTP', () => {
  it('answers 400 naming the field for an unknown loop kind, a negative budget and tool.args that is not an object', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const bad: [Record<string, unknown>, string][] = [
      [{ loop_kinds: ['spin'] }, 'body/config/loop_kinds/0'],
      [{ loop_thresholds: { spin: 3 } }, 'body/config/loop_thresholds/spin'],
      [{ loop_thresholds: { alternation: 2 } }, 'body/config/loop_thresholds/alternation'],
      [{ budget: { tokens: -5 } }, 'body/config/budget/tokens'],
      [{ budget: { cost_usd: -0.01 } }, 'body/config/budget/cost_usd'],
      [{ escalation: 'gentle' }, 'body/config/escalation'],
      [{ resend_unchanged_after: 0 }, 'body/config/resend_unchanged_after'],
    ]
    for (const [config, path] of bad) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, config } })
      expect(res.statusCode, JSON.stringify(config)).toBe(400)
      expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path)
    }
    const id = await createSession(t, a)
    const badSteps: [Record<string, unknown>, string][] = [
      [{ description: 'x', tool: { name: 'sql', args: 'CREATE TABLE' } }, 'body/tool/args'],
      [{ description: 'x', tool: { name: 'sql', args: ['a'] } }, 'body/tool/args'],
      [{ description: 'x', tool: { name: 'sql' } }, 'body/tool/args'],
      [{ description: 'x', tokens: -1 }, 'body/tokens'],
      [{ description: 'x', cost_usd: -1 }, 'body/cost_usd'],
      [{ description: 'x', error: 'yes' }, 'body/error'],
    ]
    for (const [payload, path] of badSteps) {
      const res = await step(t, a, id, payload)
      expect(res.statusCode, JSON.stringify(payload)).toBe(400)
      expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path)
    }
  })

  it('accepts real traces as they come: an issue text of 8,000 characters as the goal and a 13,500-character thought', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const goal = `Fix the mask propagation in NDData arithmetic. ${'Traceback line from the report. '.repeat(250)}`.slice(0, 8000)
    const id = await createSession(t, a, { goal })
    const thought = 'Let me look at how _arithmetic_mask handles an operand without a mask. '.repeat(190)
    expect(thought.length).toBeGreaterThan(13_000)
    const res = await step(t, a, id, { description: thought, output: 'ok', tool: { name: 'Read', args: { file_path: 'astropy/nddata/mixins/ndarithmetic.py' } } })
    expect(res.statusCode).toBe(201)
    const tooLong = await step(t, a, id, { description: 'x'.repeat(50_001) })
    expect(tooLong.json().errors.map((e: { path: string }) => e.path)).toContain('body/description')
  })

  it('stores the detection config as given and keeps the step fields in the step log', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const config = { loop_kinds: ['error_repeat', 'same_call'], loop_thresholds: { same_call: 4 }, loop_exempt_tools: ['status'], escalation: 'graduated', budget: { tokens: 10_000 } }
    const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, plan: PLAN, config } })
    expect(res.json().config).toMatchObject(config)
    const id = res.json().id as string
    await step(t, a, id, { ...failing, tokens: 120, cost_usd: 0.002 })
    await step(t, a, id, { description: 'design user schema' })
    const log = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/steps`, headers: a.headers })).json()
    expect(log.items[0]).toMatchObject({ tool: failing.tool, error: true, tokens: 120, cost_usd: 0.002 })
    expect(log.items[0].verification.spend).toEqual({ tokens: 120, cost_usd: 0.002, budget_fraction: 0.012, runaway: false })
    expect(Object.keys(log.items[1])).not.toContain('tool')
    expect(Object.keys(log.items[1])).not.toContain('error')
  })

  it('graduated: adjust, replan twice, abort on a continuing loop; loop_detected names the kind; budget_exceeded once', async () => {
    const t = await buildTestApp({ env: { GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } })
    const a = await t.createAgent()
    await subscribeToEvents(t.db, a.id)
    const id = await createSession(t, a, { goal: GOAL, plan: PLAN, config: { escalation: 'graduated', budget: { tokens: 1000 } } })
    const results = []
    // The same error each time, but for its request's timestamp (masked).
    for (let i = 0; i < 6; i++) results.push((await step(t, a, id, { ...failing, output: `${failing.output} (at 2026-11-22T09:00:0${i}Z)`, tokens: 100 })).json())
    expect(results.map((r) => r.verification.recommended_action)).toEqual(['continue', 'continue', 'adjust', 'replan', 'replan', 'abort'])
    expect(results[2].verification.loop).toMatchObject({ kind: 'error_repeat', steps: [1, 2, 3], count: 3 })
    const over = (await step(t, a, id, { description: 'design user schema', tokens: 500 })).json()
    expect(over.verification).toMatchObject({ recommended_action: 'abort', spend: { tokens: 1100, budget_fraction: 1.1 } })
    await step(t, a, id, { description: 'design user schema again', tokens: 1 })
    const events = (await t.db.all("SELECT event_type, payload FROM webhook_messages WHERE event_type IN ('session.loop_detected', 'session.budget_exceeded') ORDER BY id")) as {
      event_type: string
      payload: string
    }[]
    expect(events.map((e) => e.event_type)).toEqual(['session.loop_detected', 'session.budget_exceeded'])
    expect(JSON.parse(events[0]!.payload).data).toMatchObject({ session_id: id, external_id: null, step_number: 3, kind: 'error_repeat', steps: [1, 2, 3] })
    expect(JSON.parse(events[1]!.payload).data).toMatchObject({ session_id: id, step_number: 7, tokens: 1100, budget_fraction: 1.1, reason: 'budget spent: 1100 of 1000 tokens' })
    const hook = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: a.headers, payload: { url: 'http://127.0.0.1:9/h', event_types: ['session.budget_exceeded'] } })
    expect(hook.statusCode).toBe(201)
  })

  it('skip_unchanged: /v1/turns and the recitation route hold back an unchanged block and say why', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const config = { skip_unchanged: true, resend_unchanged_after: 3, recitation: { frequency: 1 } }
    const id = await createSession(t, a, { goal: GOAL, plan: PLAN, config })
    const turn = async (iteration: number) =>
      (await t.app.inject({ method: 'POST', url: '/v1/turns', headers: a.headers, payload: { user_message: 'continue', session_id: id, iteration } })).json<{
        injection: { text: string }
        parts: { kind: string; included: boolean; reason?: string; last_injected_at?: number; resend_at?: number }[]
      }>()
    const first = await turn(1)
    expect(
      first.parts
        .filter((p) => p.included)
        .map((p) => p.kind)
        .sort(),
    ).toEqual(['goal_reminder', 'recitation'])
    const second = await turn(2)
    expect(second.parts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'goal_reminder', included: false, reason: 'unchanged', last_injected_at: 1, resend_at: 4 }),
        expect.objectContaining({ kind: 'recitation', included: false, reason: 'unchanged', last_injected_at: 1, resend_at: 4 }),
      ]),
    )
    expect(second.injection.text).toBe('')
    const fourth = await turn(4)
    expect(
      fourth.parts
        .filter((p) => p.included)
        .map((p) => p.kind)
        .sort(),
    ).toEqual(['goal_reminder', 'recitation'])

    const preview = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/recitation?iteration=5`, headers: a.headers })).json()
    expect(preview).toMatchObject({ should_inject: false, skipped: { reason: 'unchanged', last_injected_at: 4, resend_at: 7 } })
    const post = (await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/recitation`, headers: a.headers, payload: { iteration: 5, messages: [{ role: 'user', content: 'go' }] } })).json()
    expect(post).toMatchObject({ injected: false, recitation: null, skipped: { reason: 'unchanged', resend_at: 7 }, messages: [{ role: 'user', content: 'go' }] })
    // A step that moves the plan changes the block: it goes out again.
    await step(t, a, id, { description: 'design user schema with email and password' })
    const changed = (await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/recitation`, headers: a.headers, payload: { iteration: 6, messages: [] } })).json()
    expect(changed.injected).toBe(true)
  })

  it('a restart replays journaled steps with their fields: the same verdicts as a run without one', async () => {
    const config = { loop_kinds: ALL_KINDS, escalation: 'graduated', budget: { tokens: 5000, cost_usd: 1 }, skip_unchanged: true }
    const calls = Array.from({ length: 40 }, (_, i) => {
      if (i % 7 === 3) return { description: 'design user schema', tokens: 50 + i }
      if (i % 5 === 0) return { ...failing, tokens: 80, cost_usd: 0.01 }
      return { description: `call ${i % 2 ? 'a' : 'b'}`, output: 'same', tool: { name: i % 2 ? 'a' : 'b', args: { n: 1 } }, tokens: 20 + i, cost_usd: 0.001 }
    })
    const shared = await sharedDatabase()
    const first = await buildTestApp({ handle: shared.open(), clock })
    const agent = await first.createAgent()
    const id = await createSession(first, agent, { goal: GOAL, plan: PLAN, config })
    for (const c of calls.slice(0, 35)) expect((await step(first, agent, id, c)).statusCode).toBe(201)
    await first.app.close()
    await first.handle.close()
    // 35 steps: one snapshot at 32, three journaled after it.
    const second = await buildTestApp({ handle: shared.open(), clock })
    const resumed = []
    for (const c of calls.slice(35)) resumed.push((await step(second, agent, id, c)).json())

    const straight = await buildTestApp({ clock })
    const other = await straight.createAgent()
    const sid = await createSession(straight, other, { goal: GOAL, plan: PLAN, config })
    const expected = []
    for (const [i, c] of calls.entries()) {
      const r = (await step(straight, other, sid, c)).json()
      if (i >= 35) expected.push(r)
    }
    expect(resumed).toEqual(expected)
    expect(expected.some((r) => r.verification.loop !== undefined)).toBe(true)
    await second.app.close()
    await second.handle.close()
  })
})
