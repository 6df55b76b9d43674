import { expect, it, vi } from 'vitest'
import { createMetrics } from '../../src/metrics.js'
import { SessionsService } from '../../src/sessions/service.js'
import { openTestDatabase } from '../helpers.js'
import { insertAgent } from './shared-database.js'

const FLEET = 1000

// A miss reloads the snapshot and replays the steps after it, several times a cached step's cost:
// round-robin over a fleet larger than the cache missed on every step (docs/performance.md, Fleet scale).
it(`a fleet of ${FLEET} sessions stepped round-robin stays cached: after each one's first step, no step loads its session`, async () => {
  const handle = await openTestDatabase()
  await insertAgent(handle)
  const service = new SessionsService({ db: handle.db, clock: () => Date.UTC(2026, 10, 27, 9), metrics: createMetrics() })
  // Sessions of their own, so their writes run side by side (they batch and share connections).
  const ids = await Promise.all(Array.from({ length: FLEET }, async (_, i) => (await service.create('agt_1', { goal: `Ship feature ${i} with tests` })).id))
  const load = vi.spyOn(service.store, 'load')
  const round = (n: number) => Promise.all(ids.map((id) => service.step('agt_1', id, { description: `write tests for feature ${n}` })))
  await round(1)
  expect(load).toHaveBeenCalledTimes(FLEET)
  load.mockClear()
  await round(2)
  expect(load).not.toHaveBeenCalled()
}, 120_000)
