import { describe, expect, it } from 'vitest'
import { DEMO_PLAN, DEMO_RUN, runDemo } from '../../scripts/demo-agent.js'
import { buildTestApp } from '../helpers.js'

describe('npm run demo (scripted agent)', () => {
  it('tells one story: on track, drift building up, one real loop, then a reminder and recitation that agree on progress', async () => {
    const t = await buildTestApp()
    const agent = await t.createAgent('demo')
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 })
    const lines: string[] = []

    const { sessionId, actions } = await runDemo({ baseUrl: address, apiKey: agent.apiKey, log: (l) => lines.push(l) })

    // Graduated: drift answers adjust, the loop's first detection too (with its advice), drift past 0.6 replan.
    expect(actions).toEqual(['continue', 'continue', 'adjust', 'adjust', 'adjust', 'replan'])
    expect(actions).toHaveLength(DEMO_RUN.length)
    const out = lines.join('\n')
    expect(out).toContain(sessionId)
    expect(out).toContain('"similarity":"enhanced"')

    // Step rows: "<n>  <step> <align> <drift> <sim> <severity> <off> <action>".
    const rows = lines.filter((l) => /^ ?\d {2}/.test(l)).map((l) => l.trim().split(/\s+/).slice(-4))
    expect(rows).toHaveLength(DEMO_RUN.length)
    // On-plan steps are not drift; off-goal ones are, and the streak grows by one each time.
    expect(rows.slice(0, 2).map((r) => r[1])).toEqual(['none', 'none'])
    expect(rows.map((r) => Number(r[2]))).toEqual([0, 0, 1, 2, 3, 4])
    for (const r of rows.slice(2)) expect(r[1]).not.toBe('none')
    // The drift score rises with every off-goal step.
    const drift = lines.filter((l) => /^ ?\d {2}/.test(l)).map((l) => Number(l.trim().split(/\s+/).at(-5)))
    expect(drift.slice(2)).toEqual([...drift.slice(2)].sort((a, b) => a - b))

    // The loop is flagged once, on the third identical step; sustained drift only from the fourth off-goal step.
    const verdicts = lines.filter((l) => l.startsWith('    → '))
    expect(verdicts.map((l) => l.includes('loop detected'))).toEqual([false, false, false, false, true, false])
    expect(verdicts.map((l) => l.includes('sustained drift'))).toEqual([false, false, false, false, false, true])
    expect(DEMO_RUN[2]).toEqual(DEMO_RUN[4])

    // Progress: two plan steps done, said the same way by the reminder and the recitation.
    expect(out).toContain(`[PROGRESS: 2/${DEMO_PLAN.length} - 67%]`)
    expect(out).toContain(`**Plan Progress**: 2/${DEMO_PLAN.length} tasks completed`)
    expect(out).toContain(`**Current Task**: ${DEMO_PLAN[2]}`)
    expect(out).toContain('"todos":[')
    expect(out).toContain('Build a REST API for user management')
    expect(out).toMatch(/\[Current Status - Iteration 7\]/)
    expect(out).toContain(`Verdicts: ${actions.join(' → ')}`)
  })

  it('reports a refused key as a 401 error', async () => {
    const t = await buildTestApp()
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 })
    await expect(runDemo({ baseUrl: address, apiKey: 'gk_wrong', log: () => {} })).rejects.toMatchObject({ status: 401 })
  })
})
