import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { sharedDatabase } from '../sessions/shared-database.js'
import { cosine, standInVector, startStandIn } from './embeddings-stand-in.js'
import { createSession, GOAL, postStep, RUN } from './sessions-fixtures.js'

let standIn: Awaited<ReturnType<typeof startStandIn>>
beforeAll(async () => {
  standIn = await startStandIn()
})
afterAll(async () => {
  await standIn.close()
})

const clock = () => Date.UTC(2026, 10, 22, 9)
const env = (extra: Record<string, string> = {}) => ({ GOALKEEPER_EMBEDDINGS_URL: `${standIn.base}/ok/v1/embeddings`, ...extra })

/** Four journaled ops: three steps and a drift check. */
async function firstPart(t: TestApp, a: TestAgent, id: string): Promise<void> {
  for (const d of RUN.slice(0, 3)) expect((await postStep(t, a, id, d)).statusCode).toBe(201)
  const check = await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/drift-checks`, headers: a.headers, payload: { action: 'watch football highlights' } })
  expect(check.json().similarity_mode).toBe('embeddings')
}

async function rest(t: TestApp, a: TestAgent, id: string) {
  const step = (await postStep(t, a, id, RUN[4]!)).json()
  const get = (url: string) => t.app.inject({ method: 'GET', url: `/v1/sessions/${id}${url}`, headers: a.headers }).then((r) => r.json())
  return { step, summary: await get('/summary'), trend: await get('/drift/trend?window=10') }
}

it('a restart replays journaled embedding checks with their recorded cosines and fetches the goal vector again', async () => {
  const shared = await sharedDatabase()
  const first = await buildTestApp({ env: env(), handle: shared.open(), clock })
  const agent = await first.createAgent()
  const id = await createSession(first, agent, { goal: GOAL, config: { similarity: 'embeddings' } })
  await firstPart(first, agent, id)
  await first.app.close()
  await first.handle.close()

  const from = standIn.seen.length
  const second = await buildTestApp({ env: env(), handle: shared.open(), clock })
  const resumed = await rest(second, agent, id)
  expect(standIn.seen.slice(from).map((r) => r.body.input)).toEqual([GOAL, RUN[4]])

  const straight = await buildTestApp({ env: env(), clock })
  const other = await straight.createAgent()
  const sid = await createSession(straight, other, { goal: GOAL, config: { similarity: 'embeddings' } })
  await firstPart(straight, other, sid)
  const expected = await rest(straight, other, sid)

  expect(resumed).toEqual(expected)
  // The history holds the provider's cosines (an offline replay would have scored other values).
  const cosines = [...RUN.slice(0, 3), 'watch football highlights', RUN[4]!].map((t) => cosine(standInVector(GOAL), standInVector(t)))
  expect(resumed.trend.average_similarity).toBeCloseTo(cosines.reduce((x, y) => x + y) / cosines.length, 12)
})

it('a session created with embeddings keeps working on a server started without a provider', async () => {
  const shared = await sharedDatabase()
  const first = await buildTestApp({ env: env(), handle: shared.open(), clock })
  const agent = await first.createAgent()
  const id = await createSession(first, agent, { goal: GOAL, config: { similarity: 'embeddings' } })
  await first.app.close()
  await first.handle.close()

  const second = await buildTestApp({ handle: shared.open(), clock })
  const step = await postStep(second, agent, id, RUN[0]!)
  expect(step.statusCode).toBe(201)
  expect(step.json().drift).toMatchObject({ similarity_mode: 'enhanced', similarity_fallback: expect.stringContaining('no embeddings provider configured') })
})
