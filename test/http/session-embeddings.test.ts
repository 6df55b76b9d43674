import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GoalDNA } from '../../src/engine/drift/goal-dna.js'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { cosine, standInVector, startStandIn, type SeenRequest } from './embeddings-stand-in.js'
import { createSession, GOAL, postStep } from './sessions-fixtures.js'

let standIn: Awaited<ReturnType<typeof startStandIn>>
beforeAll(async () => {
  standIn = await startStandIn()
})
afterAll(() => standIn.close())

const ON_GOAL = 'implement the user management endpoints with authentication middleware'
const OFF_GOAL = 'browse cat pictures on reddit'
const expected = (text: string) => cosine(standInVector(GOAL), standInVector(text))
const enhanced = (text: string) => new GoalDNA(GOAL, { similarity: 'enhanced' }).similarity(text)

function envFor(mode: string, timeoutMs = '300'): Record<string, string> {
  return {
    GOALKEEPER_EMBEDDINGS_URL: `${standIn.base}/${mode}/v1/embeddings`,
    GOALKEEPER_EMBEDDINGS_MODEL: 'stand-in',
    GOALKEEPER_EMBEDDINGS_API_KEY: 'sk-stand-in',
    GOALKEEPER_EMBEDDINGS_TIMEOUT_MS: timeoutMs,
  }
}

/** Requests since `from` whose input is exactly `text`. */
const asked = (from: number, text: string) => standIn.seen.slice(from).filter((r: SeenRequest) => r.body.input === text).length

async function embeddingsSession(mode: string, extra: Partial<{ t: TestApp; a: TestAgent }> = {}) {
  const t = extra.t ?? (await buildTestApp({ env: envFor(mode) }))
  const a = extra.a ?? (await t.createAgent())
  const id = await createSession(t, a, { goal: GOAL, config: { similarity: 'embeddings' } })
  return { t, a, id }
}

const driftCheck = (t: TestApp, a: TestAgent, id: string, action: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/drift-checks`, headers: { ...a.headers, ...headers }, payload: { action } })

describe('similarity: embeddings', () => {
  it('scores steps and drift checks by the provider cosine, graded at 0.25, asking for the goal once', async () => {
    const from = standIn.seen.length
    const { t, a, id } = await embeddingsSession('ok')
    const session = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}`, headers: a.headers })).json()
    expect(session.config).toMatchObject({ similarity: 'embeddings', drift_threshold: 0.25 })

    const step = await postStep(t, a, id, ON_GOAL)
    expect(step.statusCode).toBe(201)
    const drift = step.json().drift
    expect(drift.similarity_mode).toBe('embeddings')
    expect(drift.similarity_fallback).toBeUndefined()
    expect(drift.similarity).toBeCloseTo(expected(ON_GOAL), 12)
    expect(drift.severity).toBe('none')

    const off = await driftCheck(t, a, id, OFF_GOAL)
    expect(off.statusCode).toBe(200)
    expect(off.json()).toMatchObject({ similarity_mode: 'embeddings', severity: 'critical', consecutive_drift_count: 1 })
    expect(off.json().similarity).toBeCloseTo(expected(OFF_GOAL), 12)
    // The provider's cosine, not the offline scorer's: the two differ on this text.
    expect(Math.abs(off.json().similarity - enhanced(OFF_GOAL))).toBeGreaterThan(0.05)

    for (const d of ['design the user schema', 'write tests for the authentication endpoints', 'read the news']) {
      expect((await postStep(t, a, id, d)).json().drift.similarity).toBeCloseTo(expected(d), 12)
    }
    const requests = standIn.seen.slice(from)
    expect(asked(from, GOAL)).toBe(1)
    expect(requests).toHaveLength(1 + 5)
    expect(requests.every((r) => r.path === '/ok/v1/embeddings' && r.body.model === 'stand-in' && r.authorization === 'Bearer sk-stand-in')).toBe(true)

    // The step log keeps what the step answered.
    const log = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/steps`, headers: a.headers })).json()
    expect(log.items[0].drift).toEqual(drift)
  })

  it('a slow provider never fails the request: enhanced is used for that check, and said so', async () => {
    const { t, a, id } = await embeddingsSession('slow')
    const started = Date.now()
    const step = await postStep(t, a, id, ON_GOAL)
    expect(Date.now() - started).toBeLessThan(900)
    expect(step.statusCode).toBe(201)
    expect(step.json().drift).toMatchObject({ similarity_mode: 'enhanced', similarity_fallback: 'embeddings timed out after 300 ms' })
    expect(step.json().drift.similarity).toBeCloseTo(enhanced(ON_GOAL), 12)
    const check = await driftCheck(t, a, id, OFF_GOAL)
    expect(check.statusCode).toBe(200)
    expect(check.json()).toMatchObject({ similarity_mode: 'enhanced', similarity_fallback: 'embeddings timed out after 300 ms' })
    expect(check.json().similarity).toBeCloseTo(enhanced(OFF_GOAL), 12)
  })

  it.each([
    ['broken', 'embeddings failed (embeddings endpoint answered 500)'],
    ['garbage', 'embeddings failed (embeddings endpoint answered with invalid JSON)'],
    ['empty', 'embeddings failed (answer has no data array of 1 embedding(s))'],
    ['short', 'embeddings failed (dimension mismatch (goal 256, action 128))'],
  ])('a %s answer falls back to enhanced for that check', async (mode, reason) => {
    const { t, a, id } = await embeddingsSession(mode)
    const check = await driftCheck(t, a, id, OFF_GOAL)
    expect(check.statusCode).toBe(200)
    expect(check.json()).toMatchObject({ similarity_mode: 'enhanced', similarity_fallback: reason })
    expect(check.json().similarity).toBeCloseTo(enhanced(OFF_GOAL), 12)
    // Graded as an enhanced session would be (its default threshold), not against 0.25.
    const ref = new GoalDNA(GOAL, { similarity: 'enhanced' }).check(1, OFF_GOAL)
    expect(check.json().severity).toBe(ref.severity)
  })

  it('a session cannot ask for embeddings on a server without a provider (400); other modes stay offline', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, config: { similarity: 'embeddings' } } })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toContain('application/problem+json')
    expect(res.json().detail).toContain('GOALKEEPER_EMBEDDINGS_URL')
    expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(['body/config/similarity'])

    const from = standIn.seen.length
    const withProvider = await buildTestApp({ env: envFor('ok') })
    const b = await withProvider.createAgent()
    const id = await createSession(withProvider, b, { goal: GOAL, config: { similarity: 'enhanced' } })
    const step = (await postStep(withProvider, b, id, ON_GOAL)).json()
    expect(step.drift.similarity_mode).toBeUndefined()
    expect(await driftCheck(withProvider, b, id, OFF_GOAL).then((r) => r.statusCode)).toBe(200)
    expect(standIn.seen.length).toBe(from)
  })

  it('a changed goal is embedded anew; an archived session is not sent to the provider', async () => {
    const { t, a, id } = await embeddingsSession('ok')
    await postStep(t, a, id, ON_GOAL)
    const goal = 'Write a command-line tool that resizes images'
    await t.app.inject({ method: 'PUT', url: `/v1/sessions/${id}/goal`, headers: a.headers, payload: { goal } })
    const from = standIn.seen.length
    const check = (await driftCheck(t, a, id, 'resize the images from the command line')).json()
    expect(asked(from, goal)).toBe(1)
    expect(check.similarity).toBeCloseTo(cosine(standInVector(goal), standInVector('resize the images from the command line')), 12)

    await t.app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, headers: a.headers, payload: { status: 'archived' } })
    const before = standIn.seen.length
    expect((await driftCheck(t, a, id, OFF_GOAL)).statusCode).toBe(409)
    expect((await postStep(t, a, id, OFF_GOAL)).statusCode).toBe(409)
    expect(standIn.seen.length).toBe(before)
  })

  it('replays a keyed step and drift check without asking the provider again', async () => {
    const { t, a, id } = await embeddingsSession('ok')
    const send = () => t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: { ...a.headers, 'idempotency-key': 'emb-1' }, payload: { description: ON_GOAL } })
    const first = await send()
    const checked = await driftCheck(t, a, id, OFF_GOAL, { 'idempotency-key': 'emb-2' })
    const from = standIn.seen.length
    const again = await send()
    const checkedAgain = await driftCheck(t, a, id, OFF_GOAL, { 'idempotency-key': 'emb-2' })
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body).toBe(first.body)
    expect(checkedAgain.body).toBe(checked.body)
    expect(standIn.seen.length).toBe(from)
  })

  it('with llm_verify too, the LLM path uses the provider cosine', async () => {
    // No LLM listens on this port's /none path: verification falls back, the drift check must not.
    const t = await buildTestApp({ env: { ...envFor('ok'), GOALKEEPER_LLM_URL: `${standIn.base}/none/v1`, GOALKEEPER_LLM_TIMEOUT_MS: '300' } })
    const a = await t.createAgent()
    const id = await createSession(t, a, { goal: GOAL, config: { similarity: 'embeddings', llm_verify: true } })
    const step = await postStep(t, a, id, OFF_GOAL)
    expect(step.statusCode).toBe(201)
    expect(step.json().verification.reasoning).toContain('LLM verification failed')
    expect(step.json().drift).toMatchObject({ similarity_mode: 'embeddings' })
    expect(step.json().drift.similarity).toBeCloseTo(expected(OFF_GOAL), 12)
  })
})
