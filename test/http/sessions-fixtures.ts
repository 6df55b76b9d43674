import type { TestAgent, TestApp } from '../helpers.js'

export const GOAL = 'Build a REST API for user management with authentication'
export const PLAN = ['design user schema', 'implement auth endpoints', 'write tests']

/** Two on-track steps, then the same off-goal step three times (drift, then a loop), then more drift. */
export const RUN = [
  'design the user schema with email and password',
  'implement login auth endpoints with JWT tokens',
  'browse cat pictures on reddit',
  'browse cat pictures on reddit',
  'browse cat pictures on reddit',
  'watch football highlights',
]

export async function createSession(t: TestApp, agent: TestAgent, body: Record<string, unknown> = { goal: GOAL, plan: PLAN }): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: agent.headers, payload: body })
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`)
  return res.json<{ id: string }>().id
}

export async function postStep(t: TestApp, agent: TestAgent, id: string, description: string, output?: string) {
  return t.app.inject({
    method: 'POST',
    url: `/v1/sessions/${id}/steps`,
    headers: agent.headers,
    payload: output === undefined ? { description } : { description, output },
  })
}

/** Every session route with a valid body/query, `{id}` to fill in. */
export const SESSION_ROUTES: { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; url: string; payload?: unknown }[] = [
  { method: 'GET', url: '/v1/sessions/{id}' },
  { method: 'PATCH', url: '/v1/sessions/{id}', payload: { status: 'archived' } },
  { method: 'DELETE', url: '/v1/sessions/{id}' },
  { method: 'PUT', url: '/v1/sessions/{id}/goal', payload: { goal: 'another goal' } },
  { method: 'PUT', url: '/v1/sessions/{id}/plan', payload: { steps: ['a step'] } },
  { method: 'PUT', url: '/v1/sessions/{id}/tools', payload: { tools: ['Read', 'Bash'] } },
  { method: 'GET', url: '/v1/sessions/{id}/summary' },
  { method: 'POST', url: '/v1/sessions/{id}/steps', payload: { description: 'design the schema' } },
  { method: 'GET', url: '/v1/sessions/{id}/steps' },
  { method: 'POST', url: '/v1/sessions/{id}/drift-checks', payload: { action: 'design the schema' } },
  { method: 'GET', url: '/v1/sessions/{id}/drift/trend?window=5' },
  { method: 'GET', url: '/v1/sessions/{id}/drift/events' },
  { method: 'POST', url: '/v1/sessions/{id}/drift/reset' },
  { method: 'POST', url: '/v1/sessions/{id}/loop/reset' },
  { method: 'POST', url: '/v1/sessions/{id}/pitfalls', payload: { text: 'do not skip tests' } },
  { method: 'POST', url: '/v1/sessions/{id}/tried-approaches', payload: { text: 'sessions in cookies' } },
  { method: 'GET', url: '/v1/sessions/{id}/reminder?turn=1' },
  { method: 'PUT', url: '/v1/sessions/{id}/context', payload: { memories: ['uses postgres'] } },
  { method: 'GET', url: '/v1/sessions/{id}/recitation?iteration=1' },
  { method: 'GET', url: '/v1/sessions/{id}/next-turn' },
  { method: 'POST', url: '/v1/sessions/{id}/recitation', payload: { iteration: 1, messages: [{ role: 'user', content: 'hi' }] } },
]

/** Every row of the session tables and the outbox, for before/after comparisons. */
export async function dumpTables(t: TestApp): Promise<unknown> {
  const q = (sql: string) => t.db.all(sql)
  return {
    sessions: await q('SELECT * FROM sessions ORDER BY id'),
    steps: await q('SELECT * FROM steps ORDER BY session_id, step_number'),
    drift_events: await q('SELECT * FROM drift_events ORDER BY seq'),
    messages: await q('SELECT id, event_type, payload FROM webhook_messages ORDER BY id'),
  }
}
