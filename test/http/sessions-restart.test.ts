import { expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers.js'
import { sharedDatabase } from '../sessions/shared-database.js'
import { createSession, GOAL, PLAN, postStep, RUN } from './sessions-fixtures.js'

// A constant clock makes every timestamp (and elapsed time) equal between runs.
const clock = () => Date.UTC(2026, 10, 22, 9)

async function close(t: TestApp): Promise<void> {
  await t.app.close()
  await t.handle.close()
}

it('a session continues exactly after a restart on the same database', async () => {
  const shared = await sharedDatabase()
  const first = await buildTestApp({ handle: shared.open(), clock })
  const agent = await first.createAgent()
  const id = await createSession(first, agent)
  for (const d of RUN.slice(0, 4)) await postStep(first, agent, id, d)
  await first.app.inject({ method: 'POST', url: `/v1/sessions/${id}/pitfalls`, headers: agent.headers, payload: { text: 'avoid reddit' } })
  await first.app.inject({ method: 'POST', url: `/v1/sessions/${id}/reminder`, headers: agent.headers, payload: { turn: 2 } })
  await first.app.inject({ method: 'POST', url: `/v1/sessions/${id}/drift-checks`, headers: agent.headers, payload: { action: 'read the news' } })
  // Steps, the pitfall, the recorded reminder and the drift check are journal rows past the creation snapshot: the restart replays them.
  await close(first)

  const second = await buildTestApp({ handle: shared.open(), clock })
  const resumed = await postStep(second, agent, id, RUN[4]!)
  const resumedSummary = (await second.app.inject({ method: 'GET', url: `/v1/sessions/${id}/summary`, headers: agent.headers })).json()

  const straight = await buildTestApp({ clock })
  const other = await straight.createAgent()
  const sid = await createSession(straight, other, { goal: GOAL, plan: PLAN })
  for (const d of RUN.slice(0, 4)) await postStep(straight, other, sid, d)
  await straight.app.inject({ method: 'POST', url: `/v1/sessions/${sid}/pitfalls`, headers: other.headers, payload: { text: 'avoid reddit' } })
  await straight.app.inject({ method: 'POST', url: `/v1/sessions/${sid}/reminder`, headers: other.headers, payload: { turn: 2 } })
  await straight.app.inject({ method: 'POST', url: `/v1/sessions/${sid}/drift-checks`, headers: other.headers, payload: { action: 'read the news' } })
  const expected = await postStep(straight, other, sid, RUN[4]!)
  const expectedSummary = (await straight.app.inject({ method: 'GET', url: `/v1/sessions/${sid}/summary`, headers: other.headers })).json()

  expect(resumed.statusCode).toBe(201)
  expect(resumed.json()).toEqual(expected.json())
  expect(resumed.json().verification.recommended_action).toBe('adjust')
  expect(resumedSummary).toEqual(expectedSummary)
})

it('two apps writing one session through one database stay consistent (the version check refreshes each cache)', async () => {
  const shared = await sharedDatabase()
  const a = await buildTestApp({ handle: shared.open(), clock })
  const b = await buildTestApp({ handle: shared.open(), clock })
  const agent = await a.createAgent()
  const id = await createSession(a, agent)
  const alternating = []
  for (const [i, d] of RUN.entries()) alternating.push((await postStep(i % 2 === 0 ? a : b, agent, id, d)).json())

  const straight = await buildTestApp({ clock })
  const other = await straight.createAgent()
  const sid = await createSession(straight, other)
  const expected = []
  for (const d of RUN) expected.push((await postStep(straight, other, sid, d)).json())
  expect(alternating).toEqual(expected)
})
