import { expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { createSession, dumpTables, GOAL, PLAN } from './sessions-fixtures.js'

interface Part {
  kind: string
  included: boolean
  token_estimate: number
  reason?: string
}

async function turn(t: TestApp, a: TestAgent, id: string, iteration: number) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/turns', headers: a.headers, payload: { user_message: 'continue', session_id: id, iteration } })
  expect(res.statusCode).toBe(200)
  return res.json<{ injection: { text: string }; parts: Part[] }>()
}

const recitationOf = (body: { parts: Part[] }) => body.parts.find((p) => p.kind === 'recitation')

async function budget(t: TestApp, a: TestAgent, tokens: number) {
  const res = await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: a.headers, payload: { injection_budget_tokens: tokens } })
  expect(res.statusCode).toBe(200)
}

it('POST /v1/turns records a recitation only when the token budget lets it through', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a, { goal: GOAL, plan: PLAN, config: { recitation: { frequency: 3 } } })

  // Room for the goal reminder only: the due recitation is dropped.
  const first = await turn(t, a, id, 1)
  const goalTokens = first.parts.find((p) => p.kind === 'goal_reminder')!.token_estimate
  // Each proposal pays 2 tokens of separator up front (turns.ts fitToBudget).
  await budget(t, a, goalTokens + 4)
  const tight = await turn(t, a, id, 4)
  expect(tight.parts.find((p) => p.kind === 'goal_reminder')?.included).toBe(true)
  expect(recitationOf(tight)).toMatchObject({ included: false, reason: 'budget' })
  expect(tight.injection.text).not.toContain('[Current Status')

  // Not recorded: at the next iteration it is still due (iteration 1 was the last one shown).
  const preview = await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/recitation?iteration=5`, headers: a.headers })
  expect(preview.json().should_inject).toBe(true)
  await budget(t, a, 2000)
  const roomy = await turn(t, a, id, 5)
  expect(recitationOf(roomy)).toMatchObject({ included: true })
  expect(roomy.injection.text).toContain('[Current Status - Iteration 5]')
  // Recorded now: the next one is due only `frequency` iterations later.
  expect(recitationOf(await turn(t, a, id, 6))).toBeUndefined()
  expect(recitationOf(await turn(t, a, id, 8))).toMatchObject({ included: true })
})

it('POST /v1/turns counts the goal reminder as shown only when the token budget lets it through', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a, { goal: GOAL, plan: PLAN })
  const shown = async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/summary`, headers: a.headers })
    return res.json<{ reminders: { total_reminders: number; history_size: number } }>().reminders
  }

  await budget(t, a, 0)
  const dropped = await turn(t, a, id, 1)
  expect(dropped.parts.find((p) => p.kind === 'goal_reminder')).toMatchObject({ included: false, reason: 'budget' })
  expect(await shown()).toMatchObject({ total_reminders: 0, history_size: 0 })

  await budget(t, a, 2000)
  const kept = await turn(t, a, id, 2)
  expect(kept.parts.find((p) => p.kind === 'goal_reminder')).toMatchObject({ included: true })
  expect(kept.injection.text).toContain('[GOAL:')
  expect(await shown()).toMatchObject({ total_reminders: 1, history_size: 1 })
})

it('POST /v1/turns takes the iteration range the session routes take (1 to 1e9), else a 400 that records nothing', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const id = await createSession(t, a, { goal: GOAL, plan: PLAN })
  const before = await dumpTables(t)
  for (const iteration of [0, 1e300, 1_000_000_001]) {
    const res = await t.app.inject({ method: 'POST', url: '/v1/turns', headers: a.headers, payload: { user_message: 'continue', session_id: id, iteration } })
    expect(res.statusCode, `iteration ${iteration}`).toBe(400)
    expect(res.json().errors[0].path).toBe('body/iteration')
  }
  expect(await dumpTables(t)).toEqual(before)
  await turn(t, a, id, 1_000_000_000)
})
