import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { startStandIn } from './embeddings-stand-in.js'
import { createSession, GOAL, postStep } from './sessions-fixtures.js'

let standIn: Awaited<ReturnType<typeof startStandIn>>
beforeAll(async () => {
  standIn = await startStandIn()
})
afterAll(() => standIn.close())

const OPEN = 'embeddings provider unavailable (circuit open after 3 consecutive failures)'
const ACTION = 'implement the user management endpoints with authentication middleware'

/** An app on the stand-in's switchable path, opening after 3 failures for 30 s of a hand-moved clock. */
async function breakerApp(mode: string) {
  standIn.setSwitch(mode)
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') }
  const t = await buildTestApp({
    clock: () => clock.now,
    env: {
      GOALKEEPER_EMBEDDINGS_URL: `${standIn.base}/switch/v1`,
      GOALKEEPER_EMBEDDINGS_TIMEOUT_MS: '300',
      GOALKEEPER_EMBEDDINGS_BREAKER_FAILURES: '3',
      GOALKEEPER_EMBEDDINGS_BREAKER_COOLDOWN_MS: '30000',
    },
  })
  const a = await t.createAgent()
  const id = await createSession(t, a, { goal: GOAL, config: { similarity: 'embeddings' } })
  const check = async () => {
    const res = await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/drift-checks`, headers: a.headers, payload: { action: ACTION } })
    expect(res.statusCode).toBe(200)
    return res.json() as { similarity_mode: string; similarity_fallback?: string }
  }
  return { t, a, id, clock, check }
}

describe('embeddings circuit breaker', () => {
  it('after 3 timed-out checks the next ones fall back at once without calling the provider; a success after the cool-down closes it', async () => {
    const { t, a, id, clock, check } = await breakerApp('slow')
    for (let i = 0; i < 3; i++) {
      const step = await postStep(t, a, id, `${ACTION} ${i}`)
      expect(step.json().drift).toMatchObject({ similarity_mode: 'enhanced', similarity_fallback: 'embeddings timed out after 300 ms' })
    }
    const from = standIn.seen.length
    clock.now += 3_000
    const started = Date.now()
    expect(await check()).toMatchObject({ similarity_mode: 'enhanced', similarity_fallback: `${OPEN}, retrying in 27 s` })
    expect((await postStep(t, a, id, ACTION)).json().drift.similarity_fallback).toBe(`${OPEN}, retrying in 27 s`)
    expect(Date.now() - started).toBeLessThan(250)
    expect(standIn.seen.length).toBe(from)

    standIn.setSwitch('ok')
    clock.now += 27_000
    expect(await check()).toMatchObject({ similarity_mode: 'embeddings' })
    expect(standIn.seen.length).toBe(from + 2) // the trial: goal and action
    expect((await check()).similarity_mode).toBe('embeddings')
    expect(standIn.seen.length).toBe(from + 3)

    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toContain('goalkeeper_embeddings_fallbacks_total{reason="timeout"} 3')
    expect(metrics).toContain('goalkeeper_embeddings_fallbacks_total{reason="circuit_open"} 2')
  })

  it('a failed trial after the cool-down re-opens the circuit', async () => {
    const { clock, check } = await breakerApp('broken')
    for (let i = 0; i < 3; i++) expect((await check()).similarity_fallback).toBe('embeddings failed (embeddings endpoint answered 500)')
    expect((await check()).similarity_fallback).toBe(`${OPEN}, retrying in 30 s`)

    clock.now += 30_000
    const from = standIn.seen.length
    expect((await check()).similarity_fallback).toBe('embeddings failed (embeddings endpoint answered 500)')
    // The trial called the provider (the stand-in is shared by this file's tests, and a request an
    // earlier test timed out on may land late, so at least once); reopened, the next check calls nothing.
    const afterTrial = standIn.seen.length
    expect(afterTrial - from).toBeGreaterThanOrEqual(1)
    clock.now += 1_000
    expect((await check()).similarity_fallback).toBe(`${OPEN}, retrying in 29 s`)
    expect(standIn.seen.length).toBe(afterTrial)
  })

  it("one agent's refused inputs (a 4xx) never open the circuit for another agent", async () => {
    const { t, a, id, check } = await breakerApp('limited')
    const long = `${ACTION} ${'x'.repeat(6000)}`
    for (let i = 0; i < 5; i++) {
      const res = await postStep(t, a, id, long)
      expect(res.statusCode).toBe(201)
      expect(res.json().drift).toMatchObject({ similarity_mode: 'enhanced', similarity_fallback: 'embeddings failed (embeddings endpoint answered 400)' })
    }
    const b = await t.createAgent('other')
    const other = await createSession(t, b, { goal: GOAL, config: { similarity: 'embeddings' } })
    const res = await t.app.inject({ method: 'POST', url: `/v1/sessions/${other}/drift-checks`, headers: b.headers, payload: { action: ACTION } })
    expect(res.json()).toMatchObject({ similarity_mode: 'embeddings' })
    expect((await check()).similarity_mode).toBe('embeddings')
  })
})
