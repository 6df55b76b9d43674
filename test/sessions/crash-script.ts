import type { SessionsService } from '../../src/sessions/service.js'

export const CRASH_CLOCK = () => Date.UTC(2026, 10, 22, 9)

/** More ops than one snapshot interval, so the crash leaves a snapshot and a journal after it. */
export async function crashScript(svc: SessionsService): Promise<string> {
  const { id } = await svc.create('agt_1', { goal: 'Build a REST API for user management with authentication', plan: ['design user schema', 'write tests'] })
  const steps = ['design the user schema', 'browse cat pictures on reddit', 'implement auth endpoints', 'watch football highlights']
  for (let i = 0; i < 45; i++) {
    await svc.step('agt_1', id, { description: steps[i % steps.length]!, output: `ok ${i}` })
    if (i % 5 === 0) await svc.driftCheck('agt_1', id, steps[(i + 1) % steps.length]!)
    if (i % 7 === 0) await svc.recordReminder('agt_1', id, i + 1, {})
  }
  return id
}
