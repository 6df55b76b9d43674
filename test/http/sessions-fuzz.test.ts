import fc from 'fast-check'
import { expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { dumpDb, fuzzParameters, leaves, queryOf, withLeaf, wrongType } from './fuzz-arbitraries.js'
import { createSession, postStep, RUN, SESSION_ROUTES } from './sessions-fixtures.js'

const FIELDS = [
  'goal',
  'plan',
  'config',
  'metadata',
  'steps',
  'tools',
  'description',
  'output',
  'action',
  'step_number',
  'text',
  'plan_tasks',
  'todos',
  'memories',
  'active_files',
  'recent_errors',
  'iteration',
  'messages',
  'context_tokens',
  'force',
  'status',
]

/** Bodies that look like ours: known field names with values of any JSON type, plus junk. */
const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
  fc.record(
    { config: fc.dictionary(fc.constantFrom('drift_threshold', 'consecutive_limit', 'full_cutoff', 'compact_cutoff', 'recitation', 'history_size'), fc.jsonValue({ maxDepth: 2 })), goal: fc.string() },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
)
const query = queryOf(['turn', 'iteration', 'window', 'limit', 'cursor', 'status', 'drift_score', 'context_tokens', 'is_drift_active'])

it('random request bodies never cause a 5xx, and a rejected request changes no stored data', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a)
  for (const d of RUN.slice(0, 3)) await postStep(t, a, id, d)
  const routes = [{ method: 'POST' as const, url: '/v1/sessions' }, ...SESSION_ROUTES.filter((r) => r.method !== 'DELETE')]
  let rejected = 0
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...routes), body, query, async (route, payload, q) => {
      const before = await dumpDb(t)
      const url = route.url.replace('{id}', id).split('?')[0]! + (q ? `?${q}` : '')
      const res = await t.app.inject({
        method: route.method,
        url,
        headers: { ...a.headers, 'content-type': 'application/json' },
        ...(route.method === 'GET' ? {} : { payload: JSON.stringify(payload) }),
      })
      expect(res.statusCode, `${route.method} ${url} ${JSON.stringify(payload)} → ${res.body}`).toBeLessThan(500)
      if (res.statusCode >= 400) {
        rejected++
        expect(res.headers['content-type']).toContain('application/problem+json')
        expect(await dumpDb(t)).toEqual(before)
      }
      // Keep the session writable for the next run.
      if (route.method === 'PATCH') await t.db.run("UPDATE sessions SET status = 'active'")
    }),
    // Found on PostgreSQL (seed 541824835): a cursor past the integer step_number was a 500.
    fuzzParameters(300, [[{ method: 'GET', url: '/v1/sessions/{id}/steps' }, '', 'cursor=2147483648']]),
  )
  expect(rejected).toBeGreaterThan(100)
  // Several seconds alone; past the default 20 s beside the rest of the suite on two busy cores.
}, 60_000)

/** Valid bodies whose every scalar leaf has a declared type (free-form metadata/content left out). */
const TYPED: { method: 'POST' | 'PUT' | 'PATCH'; url: string; payload: Record<string, unknown> }[] = [
  {
    method: 'POST',
    url: '/v1/sessions',
    payload: {
      goal: 'ship the billing export',
      plan: ['write the query', 'add the endpoint'],
      config: {
        drift_threshold: 0.2,
        consecutive_limit: 3,
        history_size: 10,
        full_cutoff: 3,
        compact_cutoff: 6,
        max_pitfalls: 5,
        max_tried: 5,
        drift_warning_threshold: 0.3,
        recitation: { frequency: 3, sources: ['goal', 'plan'], max_tokens: 200 },
        llm_verify: false,
      },
    },
  },
  { method: 'PATCH', url: '/v1/sessions/{id}', payload: { status: 'archived' } },
  { method: 'PUT', url: '/v1/sessions/{id}/goal', payload: { goal: 'another goal' } },
  { method: 'PUT', url: '/v1/sessions/{id}/plan', payload: { steps: ['a step', 'another step'] } },
  { method: 'PUT', url: '/v1/sessions/{id}/tools', payload: { tools: ['Read', 'mcp__github__*'] } },
  { method: 'POST', url: '/v1/sessions/{id}/steps', payload: { description: 'design the schema', output: 'done' } },
  { method: 'POST', url: '/v1/sessions/{id}/drift-checks', payload: { action: 'design the schema', step_number: 3 } },
  { method: 'POST', url: '/v1/sessions/{id}/pitfalls', payload: { text: 'do not skip tests' } },
  {
    method: 'PUT',
    url: '/v1/sessions/{id}/context',
    payload: { plan_tasks: [{ description: 'schema', status: 'pending' }], todos: [{ content: 'tests', status: 'completed' }], memories: ['uses postgres'] },
  },
  { method: 'POST', url: '/v1/sessions/{id}/recitation', payload: { iteration: 2, messages: [{ role: 'user', content: 'hi' }], context_tokens: 100, force: true } },
]

it('every typed template is accepted as is', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  for (const route of TYPED) {
    const id = await createSession(t, a)
    const res = await t.app.inject({ method: route.method, url: route.url.replace('{id}', id), headers: a.headers, payload: route.payload })
    expect(res.statusCode, `${route.method} ${route.url} → ${res.body}`).toBeLessThan(300)
  }
})

it('a wrongly typed scalar anywhere in a body is a 400 and changes no stored data', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a)
  for (const d of RUN.slice(0, 3)) await postStep(t, a, id, d)
  const mutated = fc
    .constantFrom(...TYPED)
    .chain((route) =>
      fc.constantFrom(...leaves(route.payload, (path, key) => key === 'content' && path.includes('messages'))).chain((leaf) => wrongType(leaf.value).map((bad) => ({ route, leaf, bad }))),
    )
  await fc.assert(
    fc.asyncProperty(mutated, async ({ route, leaf, bad }) => {
      const before = await dumpDb(t)
      const payload = withLeaf(route.payload, leaf.path, bad)
      const res = await t.app.inject({ method: route.method, url: route.url.replace('{id}', id), headers: a.headers, payload })
      expect(res.statusCode, `${route.method} ${route.url} ${JSON.stringify(payload)} → ${res.body}`).toBe(400)
      expect(res.json().errors).toContainEqual({ path: `body/${leaf.path.join('/')}`, message: expect.any(String) })
      expect(await dumpDb(t)).toEqual(before)
    }),
    fuzzParameters(300),
  )
  // Several seconds alone; past the default 20 s beside the rest of the suite on two busy cores.
}, 60_000)
