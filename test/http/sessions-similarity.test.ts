import { describe, expect, it } from 'vitest'
import { GoalDNA } from '../../src/engine/drift/goal-dna.js'
import { buildTestApp } from '../helpers.js'
import { createSession, GOAL, PLAN } from './sessions-fixtures.js'

const ACTION = 'implement the user management endpoints with authentication middleware'

describe('per-session similarity mode', () => {
  it('scores drift checks with the enhanced scorer and its own default threshold', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a, { goal: GOAL, plan: PLAN, config: { similarity: 'enhanced' } })
    const s = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}`, headers: a.headers })).json()
    expect(s.config).toMatchObject({ similarity: 'enhanced', drift_threshold: 0.115 })

    const check = await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/drift-checks`, headers: a.headers, payload: { action: ACTION } })
    expect(check.statusCode).toBe(200)
    const enhanced = new GoalDNA(GOAL, { similarity: 'enhanced' }).similarity(ACTION)
    const lexical = new GoalDNA(GOAL).similarity(ACTION)
    expect(enhanced).not.toBeCloseTo(lexical, 3)
    expect(check.json().similarity).toBeCloseTo(enhanced, 10)
  })

  it('keeps an explicit threshold, defaults to lexical, and rejects an unknown mode', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const explicit = await createSession(t, a, { goal: GOAL, config: { similarity: 'enhanced', drift_threshold: 0.2 } })
    const got = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${explicit}`, headers: a.headers })).json()
    expect(got.config).toMatchObject({ similarity: 'enhanced', drift_threshold: 0.2 })

    const plain = await createSession(t, a, { goal: GOAL })
    const lexical = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${plain}`, headers: a.headers })).json()
    expect(lexical.config).toMatchObject({ similarity: 'lexical', drift_threshold: 0.15 })

    const bad = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, config: { similarity: 'neural' } } })
    expect(bad.statusCode).toBe(400)
    expect(bad.headers['content-type']).toContain('application/problem+json')
  })
})
