import fc from 'fast-check'
import { expect, it } from 'vitest'
import { buildTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers.js'
import { authorization, expectTemplatesAccepted, fuzzRoutes, fuzzRuns, fuzzWrongTypes, junkBody, rawBody, text, withJunkField, type FuzzRoute } from './fuzz-arbitraries.js'

/** Fuzz of the admin routes (agents and their API keys). */

interface World {
  t: TestApp
  /** A bystander agent whose key the fuzz sends where the admin token belongs. */
  apiKey: string
  /** Agents the fuzz may delete, each with its keys (replaced once deleted). */
  victims: { agent: string; keys: string[] }[]
}

async function victim(t: TestApp): Promise<{ agent: string; keys: string[] }> {
  const agents = t.app.services.agents
  const { id } = await agents.create('victim')
  const first = (await t.db.get<{ id: string }>('SELECT id FROM api_keys WHERE agent_id = ?', [id]))!.id
  return { agent: id, keys: [first, (await agents.createKey(id)).id] }
}

async function world(env?: Record<string, string | undefined>): Promise<World> {
  const t = await buildTestApp(env ? { env } : {})
  return { t, apiKey: (await t.createAgent('bystander')).apiKey, victims: [await victim(t), await victim(t)] }
}

async function refresh(w: World): Promise<void> {
  const exists = async (id: string) => (await w.t.db.get('SELECT 1 FROM agents WHERE id = ?', [id])) !== undefined
  w.victims = await Promise.all(w.victims.map(async (v) => ((await exists(v.agent)) ? v : victim(w.t))))
}

const routes = (w: World): FuzzRoute[] => [
  { method: 'POST', path: '/v1/agents', body: rawBody(fc.oneof({ arbitrary: withJunkField(fc.record({ name: text(200) })), weight: 4 }, junkBody(['name']))) },
  {
    method: 'GET',
    path: '/v1/agents',
    query: { limit: fc.constantFrom('1', '2', '50', '200'), cursor: fc.constantFrom(...w.victims.map((v) => v.agent), 'agt_0', 'agt_zzzz', 'zzz') },
  },
  { method: 'DELETE', path: '/v1/agents/{agent_id}' },
  { method: 'POST', path: '/v1/agents/{agent_id}/keys' },
  { method: 'DELETE', path: '/v1/agents/{agent_id}/keys/{key_id}' },
]

const ids = (w: World) => ({
  agent_id: { prefix: 'agt', known: () => w.victims.map((v) => v.agent) },
  // Every victim's keys, so a key is often paired with the wrong agent (a 404).
  key_id: { prefix: 'key', known: () => w.victims.flatMap((v) => v.keys) },
})

it('random admin requests never cause a 5xx, and a rejected one changes no stored data', async () => {
  const w = await world()
  const rejected = await fuzzRoutes(w.t, {
    routes: routes(w),
    ids: ids(w),
    authorization: authorization(TEST_ADMIN_TOKEN, w.apiKey),
    after: () => refresh(w),
    numRuns: 300,
  })
  expect(rejected).toBeGreaterThan(90)
  // Several seconds alone; past the default 20 s beside the rest of the suite on two busy cores.
}, 60_000)

it('with no admin token configured, random admin requests are all refused (401/403 problem+json) and change nothing', async () => {
  const w = await world({ GOALKEEPER_ADMIN_TOKEN: undefined })
  const rejected = await fuzzRoutes(w.t, {
    routes: routes(w),
    ids: ids(w),
    authorization: authorization(TEST_ADMIN_TOKEN, w.apiKey),
    numRuns: 60,
  })
  // Every request was refused (and, by fuzzRoutes, left every table as it was).
  expect(rejected).toBe(fuzzRuns(60))
})

it('a key is revoked only through its own agent: another agent id is a 404 and the key still works', async () => {
  const w = await world()
  const [v1, v2] = w.victims as [World['victims'][0], World['victims'][0]]
  const res = await w.t.app.inject({ method: 'DELETE', url: `/v1/agents/${v1.agent}/keys/${v2.keys[0]}`, headers: w.t.adminHeaders })
  expect(res.statusCode).toBe(404)
  expect(await w.t.db.get('SELECT count(*) AS n FROM api_keys WHERE id = ?', [v2.keys[0]])).toEqual({ n: 1 })
})

it('the typed agent template is accepted, and a wrongly typed name is a 400 that stores nothing', async () => {
  const w = await world()
  const typed = [{ method: 'POST' as const, url: '/v1/agents', payload: { name: 'worker' } }]
  await expectTemplatesAccepted(w.t, typed, w.t.adminHeaders)
  await fuzzWrongTypes(w.t, typed, w.t.adminHeaders, { numRuns: 30 })
})
