import { describe, expect, it } from 'vitest'
import { DEMO_RUN, runDemo } from '../../scripts/demo-agent.js'
import { buildTestApp } from '../helpers.js'

describe('npm run demo (scripted agent)', () => {
  it('shows continue verdicts, then adjust/replan once the run drifts and loops, then the reminder and recitation', async () => {
    const t = await buildTestApp()
    const agent = await t.createAgent('demo')
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 })
    const lines: string[] = []

    const { sessionId, actions } = await runDemo({ baseUrl: address, apiKey: agent.apiKey, log: (l) => lines.push(l) })

    expect(actions).toHaveLength(DEMO_RUN.length)
    const firstContinue = actions.indexOf('continue')
    expect(firstContinue).toBe(0)
    const firstCorrection = actions.findIndex((a, i) => i > firstContinue && (a === 'adjust' || a === 'replan'))
    expect(firstCorrection).toBeGreaterThan(firstContinue)
    // The third identical off-goal step is a loop: replan.
    expect(actions[5]).toBe('replan')

    const out = lines.join('\n')
    expect(out).toContain(sessionId)
    expect(out).toMatch(/loop detected/)
    expect(out).toContain('Build a REST API for user management')
    expect(out).toMatch(/\[Current Status - Iteration 5\]/)
    expect(out).toContain(`Verdicts: ${actions.join(' → ')}`)
  })

  it('reports a refused key as a 401 error', async () => {
    const t = await buildTestApp()
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 })
    await expect(runDemo({ baseUrl: address, apiKey: 'gk_wrong', log: () => {} })).rejects.toMatchObject({ status: 401 })
  })
})
