import fc from 'fast-check'
import { expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { createSession, dumpTables, postStep, RUN, SESSION_ROUTES } from './sessions-fixtures.js'

const FIELDS = ['goal', 'plan', 'config', 'metadata', 'steps', 'description', 'output', 'action', 'step_number', 'text',
  'plan_tasks', 'todos', 'memories', 'active_files', 'recent_errors', 'iteration', 'messages', 'context_tokens', 'force', 'status']

/** Bodies that look like ours: known field names with values of any JSON type, plus junk. */
const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
  fc.record({ config: fc.dictionary(fc.constantFrom('drift_threshold', 'consecutive_limit', 'full_cutoff', 'compact_cutoff', 'recitation', 'history_size'), fc.jsonValue({ maxDepth: 2 })), goal: fc.string() }, { requiredKeys: [] }),
  fc.jsonValue({ maxDepth: 3 }),
)
const query = fc.dictionary(fc.constantFrom('turn', 'iteration', 'window', 'limit', 'cursor', 'status', 'drift_score', 'context_tokens', 'is_drift_active'), fc.string({ maxLength: 12 }), { maxKeys: 3 })

it('random request bodies never cause a 5xx, and a rejected request changes no stored data', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a)
  for (const d of RUN.slice(0, 3)) await postStep(t, a, id, d)
  const routes = [{ method: 'POST' as const, url: '/v1/sessions' }, ...SESSION_ROUTES.filter((r) => r.method !== 'DELETE')]
  let rejected = 0
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...routes), body, query, async (route, payload, q) => {
      const before = dumpTables(t)
      const qs = new URLSearchParams(q).toString()
      const url = route.url.replace('{id}', id).split('?')[0]! + (qs ? `?${qs}` : '')
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
        expect(dumpTables(t)).toEqual(before)
      }
      // Keep the session writable for the next run.
      if (route.method === 'PATCH') t.handle.sqlite.prepare("UPDATE sessions SET status = 'active'").run()
    }),
    { numRuns: 300 },
  )
  expect(rejected).toBeGreaterThan(100)
})
