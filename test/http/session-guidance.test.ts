import { afterEach, expect, it, vi } from 'vitest'
import { KeyedLock } from '../../src/sessions/write-lock.js'
import { buildTestApp, subscribeToEvents } from '../helpers.js'
import { createSession, dumpTables, GOAL, postStep, RUN } from './sessions-fixtures.js'

afterEach(() => vi.restoreAllMocks())

it('pitfalls and tried approaches (duplicates ignored) feed the reminder; a new goal clears them', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a)
  const url = `/v1/sessions/${id}`
  await t.app.inject({ method: 'POST', url: `${url}/pitfalls`, headers: a.headers, payload: { text: 'storing plaintext passwords' } })
  const p = await t.app.inject({ method: 'POST', url: `${url}/pitfalls`, headers: a.headers, payload: { text: 'storing plaintext passwords' } })
  expect(p.statusCode).toBe(200)
  expect(p.json()).toEqual({ pitfalls: ['storing plaintext passwords'] })
  const tr = await t.app.inject({ method: 'POST', url: `${url}/tried-approaches`, headers: a.headers, payload: { text: 'session cookies' } })
  expect(tr.json()).toEqual({ tried_approaches: ['session cookies'] })
  expect((await t.app.inject({ method: 'POST', url: `${url}/pitfalls`, headers: a.headers, payload: { text: '' } })).statusCode).toBe(400)

  const full = (await t.app.inject({ method: 'GET', url: `${url}/reminder?turn=1`, headers: a.headers })).json()
  expect(full).toMatchObject({ mode: 'full', turn_number: 1, includes_drift_warning: false })
  expect(full.text).toContain(`[GOAL: ${GOAL}]`)
  expect(full.text).toContain('[AVOID: storing plaintext passwords]')
  expect(full.text).toContain('[TRIED: session cookies]')
  expect(full.text).toContain('[PROGRESS: 0/3')
  expect(full.text).toContain('[FOCUS: design user schema]')
  expect(full.token_estimate).toBeGreaterThan(10)
  expect((await t.app.inject({ method: 'GET', url: `${url}/reminder?turn=10`, headers: a.headers })).json().mode).toBe('compact')
  const ultra = (await t.app.inject({ method: 'GET', url: `${url}/reminder?turn=20&drift_score=0.9`, headers: a.headers })).json()
  expect(ultra).toMatchObject({ mode: 'ultra_compact', includes_drift_warning: true })
  expect(ultra.text).toContain('[DRIFT: 0.90!]')
  expect((await t.app.inject({ method: 'GET', url: `${url}/reminder`, headers: a.headers })).statusCode).toBe(400)

  // Drift defaults to the live state.
  for (const d of RUN.slice(2, 5)) await postStep(t, a, id, d)
  const live = (await t.app.inject({ method: 'GET', url: `${url}/reminder?turn=2`, headers: a.headers })).json()
  expect(live.includes_drift_warning).toBe(true)

  // The GETs recorded nothing; the POST builds the same reminder and records it.
  const read = async () => (await t.app.inject({ method: 'GET', url: `${url}/summary`, headers: a.headers })).json().reminders
  expect(await read()).toEqual({ total_reminders: 0, pitfalls_count: 1, tried_approaches_count: 1, history_size: 0 })
  const recorded = await t.app.inject({ method: 'POST', url: `${url}/reminder`, headers: a.headers, payload: { turn: 2 } })
  expect(recorded.statusCode).toBe(200)
  expect(recorded.json().text).toBe(live.text)
  expect(await read()).toEqual({ total_reminders: 1, pitfalls_count: 1, tried_approaches_count: 1, history_size: 1 })
  expect((await t.app.inject({ method: 'POST', url: `${url}/reminder`, headers: a.headers, payload: { turn: '2' } })).statusCode).toBe(400)

  const goal = await t.app.inject({ method: 'PUT', url: `${url}/goal`, headers: a.headers, payload: { goal: 'Write the quarterly sales report' } })
  expect(goal.statusCode).toBe(200)
  expect(goal.json()).toMatchObject({ goal: 'Write the quarterly sales report', state: { original_goal: 'Write the quarterly sales report', drift_score: 0 } })
  const after = (await t.app.inject({ method: 'GET', url: `${url}/summary`, headers: a.headers })).json()
  expect(after.reminders).toEqual({ total_reminders: 1, pitfalls_count: 0, tried_approaches_count: 0, history_size: 0 })
  expect(after.dna.total_checks).toBe(0)
  const check = (await t.app.inject({ method: 'POST', url: `${url}/drift-checks`, headers: a.headers, payload: { action: 'draft the quarterly sales report tables' } })).json()
  expect(check.severity).toBe('none')
})

it('GET …/reminder records nothing: no row, no version, no write lock; the POST records', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a)
  const url = `/v1/sessions/${id}`
  for (const d of RUN.slice(0, 2)) await postStep(t, a, id, d)
  const before = await dumpTables(t)
  const get = () => t.app.inject({ method: 'GET', url: `${url}/reminder?turn=3`, headers: a.headers })
  // The GET never queues behind a write: it does not ask for the session's write lock.
  const lock = vi.spyOn(KeyedLock.prototype, 'acquire')
  expect((await get()).statusCode).toBe(200)
  expect((await get()).statusCode).toBe(200)
  expect(lock).not.toHaveBeenCalled()
  expect(await dumpTables(t)).toEqual(before)
  const summary = async () => (await t.app.inject({ method: 'GET', url: `${url}/summary`, headers: a.headers })).json().reminders
  expect(await summary()).toMatchObject({ total_reminders: 0, history_size: 0 })

  expect((await t.app.inject({ method: 'POST', url: `${url}/reminder`, headers: a.headers, payload: { turn: 3 } })).statusCode).toBe(200)
  expect(lock).toHaveBeenCalledWith(id)
  expect(await summary()).toMatchObject({ total_reminders: 1, history_size: 1 })
  expect(await dumpTables(t)).not.toEqual(before)

  // A read: an archived session still answers it, while the POST, a write, is refused.
  await t.app.inject({ method: 'PATCH', url, headers: a.headers, payload: { status: 'archived' } })
  expect((await get()).statusCode).toBe(200)
  expect((await t.app.inject({ method: 'POST', url: `${url}/reminder`, headers: a.headers, payload: { turn: 3 } })).statusCode).toBe(409)
})

it('drift checks record events; trend and events list reflect them', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  await subscribeToEvents(t.db, a.id)
  const id = await createSession(t, a, { goal: 'Build a REST API for user management with authentication', config: { consecutive_limit: 1 } })
  const url = `/v1/sessions/${id}`
  const on = (await t.app.inject({ method: 'POST', url: `${url}/drift-checks`, headers: a.headers, payload: { action: 'build the REST API for user management with authentication' } })).json()
  expect(on).toMatchObject({ severity: 'none', drifting: false, consecutive_drift_count: 0, event: null })
  const off1 = (await t.app.inject({ method: 'POST', url: `${url}/drift-checks`, headers: a.headers, payload: { action: 'bake sourdough bread', step_number: 7 } })).json()
  expect(off1).toMatchObject({ drifting: false, consecutive_drift_count: 1, event: { step_number: 7, action_text: 'bake sourdough bread' } })
  const off2 = (await t.app.inject({ method: 'POST', url: `${url}/drift-checks`, headers: a.headers, payload: { action: 'water the tomato plants' } })).json()
  expect(off2.drifting).toBe(true)
  const trend = (await t.app.inject({ method: 'GET', url: `${url}/drift/trend?window=3`, headers: a.headers })).json()
  expect(trend).toMatchObject({ direction: 'worsening', consecutive_drifts: 2, total_drift_events: 2 })
  expect(trend.trend_slope).toBeLessThan(-0.02)
  expect((await t.app.inject({ method: 'GET', url: `${url}/drift/trend?window=0`, headers: a.headers })).statusCode).toBe(400)
  const events = (await t.app.inject({ method: 'GET', url: `${url}/drift/events?limit=1`, headers: a.headers })).json()
  expect(events.items).toHaveLength(1)
  expect(events.items[0]).toMatchObject({ step_number: 7, severity: expect.any(String), timestamp: expect.stringMatching(/Z$/) })
  const rest = (await t.app.inject({ method: 'GET', url: `${url}/drift/events?cursor=${events.next_cursor}`, headers: a.headers })).json()
  expect(rest.items.map((e: { action_text: string }) => e.action_text)).toEqual(['water the tomato plants'])
  const reset = await t.app.inject({ method: 'POST', url: `${url}/drift/reset`, headers: a.headers })
  expect(reset.statusCode).toBe(200)
  expect(reset.json()).toHaveProperty('original_goal')
  const msgs = await t.db.get("SELECT count(*) AS n FROM webhook_messages WHERE event_type = 'session.drift_detected'")
  expect(msgs).toEqual({ n: 1 })
})

it('recitation: GET is read-only, POST injects before the last user message on schedule', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a)
  const url = `/v1/sessions/${id}`
  const ctx = await t.app.inject({
    method: 'PUT',
    url: `${url}/context`,
    headers: a.headers,
    payload: { todos: [{ content: 'hash passwords', status: 'pending' }], memories: ['uses postgres'] },
  })
  expect(ctx.statusCode).toBe(200)
  expect(ctx.json()).toEqual({ todos: [{ content: 'hash passwords', status: 'pending' }], memories: ['uses postgres'] })
  const ctx2 = await t.app.inject({ method: 'PUT', url: `${url}/context`, headers: a.headers, payload: { recent_errors: ['TypeError'] } })
  expect(ctx2.json().todos).toHaveLength(1)
  expect((await t.app.inject({ method: 'PUT', url: `${url}/context`, headers: a.headers, payload: { todos: [{ content: 'x', status: 'later' }] } })).statusCode).toBe(400)

  const before = await dumpTables(t)
  const preview = (await t.app.inject({ method: 'GET', url: `${url}/recitation?iteration=1`, headers: a.headers })).json()
  const again = (await t.app.inject({ method: 'GET', url: `${url}/recitation?iteration=1`, headers: a.headers })).json()
  expect(again).toEqual(preview)
  expect(await dumpTables(t)).toEqual(before)
  expect(preview).toMatchObject({ should_inject: true, frequency: 5 })
  expect(preview.text.startsWith('[Current Status - Iteration 1]\n')).toBe(true)
  expect(preview.content).toContain(`**Goal**: ${GOAL}`)
  expect(preview.content).toContain('hash passwords')
  expect(preview.token_estimate).toBeGreaterThan(5)

  const messages = [
    { role: 'system', content: 'You are an agent.' },
    { role: 'user', content: 'start', name: 'u1' },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'next' },
  ]
  const inj = (await t.app.inject({ method: 'POST', url: `${url}/recitation`, headers: a.headers, payload: { iteration: 1, messages } })).json()
  expect(inj.injected).toBe(true)
  expect(inj.messages).toHaveLength(5)
  expect(inj.messages[3]).toEqual({ role: 'system', content: preview.text })
  expect(inj.messages[1]).toEqual({ role: 'user', content: 'start', name: 'u1' })
  expect(inj.recitation).toEqual({ text: preview.text, token_estimate: preview.token_estimate })
  const notDue = (await t.app.inject({ method: 'POST', url: `${url}/recitation`, headers: a.headers, payload: { iteration: 3, messages } })).json()
  expect(notDue).toEqual({ messages, injected: false, recitation: null })
  expect((await t.app.inject({ method: 'GET', url: `${url}/recitation?iteration=3`, headers: a.headers })).json().should_inject).toBe(false)
  expect((await t.app.inject({ method: 'GET', url: `${url}/recitation?iteration=6`, headers: a.headers })).json().should_inject).toBe(true)
  const forced = (await t.app.inject({ method: 'POST', url: `${url}/recitation`, headers: a.headers, payload: { iteration: 3, messages: [], force: true } })).json()
  expect(forced.injected).toBe(true)
  expect(forced.messages).toHaveLength(1)
})

it('adaptive recitation frequency follows context_tokens', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a, { goal: GOAL, config: { recitation: { frequency: 'adaptive' } } })
  const get = async (q: string) => (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/recitation?${q}`, headers: a.headers })).json()
  expect((await get('iteration=2&context_tokens=5000')).frequency).toBe(10)
  expect((await get('iteration=2&context_tokens=80000')).frequency).toBe(3)
})

it('provides the goal reminder and recitation as turn parts', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a)
  const sessions = t.app.services.sessions
  const all = (p: readonly unknown[]) => new Set(p.keys())
  const parts = await sessions.turnParts({ agentId: a.id, sessionId: id, iteration: 1, messages: undefined, nowMs: Date.now(), fit: all })
  expect(parts.parts.map((p) => p.kind)).toEqual(['goal_reminder', 'recitation'])
  expect(parts.parts[0]!.content).toContain(`[GOAL: ${GOAL}]`)
  const withMessages = await sessions.turnParts({ agentId: a.id, sessionId: id, iteration: 6, messages: [{ role: 'user', content: 'go' }], nowMs: Date.now(), fit: all })
  expect(withMessages.messages).toHaveLength(2)
  await expect(sessions.turnParts({ agentId: 'agt_other', sessionId: id, iteration: 1, messages: undefined, nowMs: 0, fit: all })).rejects.toThrow(/No session/)
})

it('POST /v1/turns with a session_id merges the goal reminder and the recitation', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a)
  const res = await t.app.inject({ method: 'POST', url: '/v1/turns', headers: a.headers, payload: { user_message: 'continue', session_id: id, iteration: 1 } })
  expect(res.statusCode).toBe(200)
  const body = res.json()
  expect(body.parts.filter((p: { kind: string }) => p.kind !== 'reminder').map((p: { kind: string; included: boolean }) => [p.kind, p.included])).toEqual([
    ['goal_reminder', true],
    ['recitation', true],
  ])
  expect(body.injection.text).toContain(`[GOAL: ${GOAL}]`)
  expect(body.injection.text).toContain('[Current Status - Iteration 1]')
  const other = await t.createAgent('other')
  const foreign = await t.app.inject({ method: 'POST', url: '/v1/turns', headers: other.headers, payload: { user_message: 'x', session_id: id } })
  expect(foreign.statusCode).toBe(404)
})
