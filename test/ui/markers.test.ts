import { describe, expect, it } from 'vitest'
import { stallCounts, stepMarkers } from '../../ui/src/markers.js'
import { buildTestApp } from '../helpers.js'
import { GOAL, PLAN } from './fixtures.js'

/**
 * The chart's markers are derived in the browser from the step log; the engine is the truth.
 * A run with aligned work, repeats, unrelated work and a loop: the markers must sit exactly where
 * the step results' state says the loop, the stall and sustained drift began.
 */
describe('stepMarkers', () => {
  it('matches the state the engine reported after every step', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const sessions = t.app.services.sessions
    const session = await sessions.create(a.id, { goal: GOAL, plan: PLAN })
    const run = [
      'Measured request rates per API key from the search API access logs',
      'Measured request rates per API key from the search API access logs', // an aligned repeat: no progress
      'Added a token bucket rate limiter middleware keyed by API key',
      'Restyled the marketing landing page hero banner',
      'Rewrote the footer copy of the company blog',
      'Tweaked CSS gradients on the pricing page',
      'Restyled the marketing landing page hero banner',
      'Restyled the marketing landing page hero banner', // the third time: a loop
      'Chose new display fonts for the newsletter',
      'Returned 429 with a Retry-After header when the search API rate limit is exceeded',
    ]
    const results: Awaited<ReturnType<typeof sessions.step>>[] = []
    for (const description of run) results.push(await sessions.step(a.id, session.id, { description }))
    const log = (await sessions.steps(a.id, session.id, 200)).items

    expect(stallCounts(log)).toEqual(results.map((r) => r.state.stall_turns))
    const markers = stepMarkers(log)
    const at = (kind: string) => markers.filter((m) => m.kind === kind).map((m) => m.step)

    const loopStarts = results.filter((r, i) => r.state.loop_detected && !(results[i - 1]?.state.loop_detected ?? false)).map((r) => r.step_number)
    expect(loopStarts).toEqual([8])
    expect(at('loop')).toEqual([8])
    const stalls = results.filter((r, i) => r.state.stall_turns === 5 && (results[i - 1]?.state.stall_turns ?? 0) < 5).map((r) => r.step_number)
    expect(stalls).not.toEqual([])
    expect(at('stall')).toEqual(stalls)
    const drifts = results.filter((r, i) => r.drift.drifting && !(results[i - 1]?.drift.drifting ?? false)).map((r) => r.step_number)
    expect(drifts).not.toEqual([])
    expect(at('drift')).toEqual(drifts)
    expect(at('replan')).toEqual(results.filter((r) => r.verification.recommended_action === 'replan').map((r) => r.step_number))
  })
  it('marks a loop of the newer kinds once, where the engine reported it, labelled by kind', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const sessions = t.app.services.sessions
    const session = await sessions.create(a.id, { goal: GOAL, plan: PLAN, config: { loop_kinds: ['same_call'], loop_thresholds: { same_call: 3 } } })
    const call = { description: 'Read the rate limiter settings', tool: { name: 'read_config', args: { key: 'rate_limit' } } }
    for (let i = 0; i < 5; i++) await sessions.step(a.id, session.id, { ...call, output: `attempt ${i}` })
    const log = (await sessions.steps(a.id, session.id, 200)).items
    expect(log.map((s) => s.verification.loop?.kind ?? null)).toEqual([null, null, 'same_call', 'same_call', 'same_call'])
    const loops = stepMarkers(log).filter((m) => m.kind === 'loop')
    expect(loops).toEqual([{ kind: 'loop', step: 3, label: 'Loop (same call) detected at step 3' }])
  })
})
