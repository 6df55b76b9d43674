import { afterEach, expect, it, vi } from 'vitest'
import { createMetrics } from '../../src/metrics.js'
import { SessionRepository } from '../../src/sessions/repository.js'
import { SessionsService } from '../../src/sessions/service.js'
import { sessionHeapEstimate } from '../../src/sessions/store.js'
import { openTestDatabase } from '../helpers.js'
import { insertAgent } from './shared-database.js'

afterEach(() => vi.restoreAllMocks())

const FLEET = 1000

// A miss reloads the snapshot and replays the steps after it, several times a cached step's cost:
// round-robin over a fleet larger than the cache missed on every step (docs/performance.md, Fleet scale).
it(`a fleet of ${FLEET} sessions stepped round-robin stays cached: after each one's first step, no step loads its session`, async () => {
  const handle = await openTestDatabase()
  await insertAgent(handle)
  const service = new SessionsService({ db: handle.db, clock: () => Date.UTC(2026, 10, 27, 9), metrics: createMetrics() })
  // Sessions of their own, so their writes run side by side (they batch and share connections).
  const ids = await Promise.all(Array.from({ length: FLEET }, async (_, i) => (await service.create('agt_1', { goal: `Ship feature ${i} with tests` })).id))
  // A load reads the session's snapshot (and the steps journaled after it).
  const load = vi.spyOn(SessionRepository.prototype, 'stored')
  const round = (n: number) => Promise.all(ids.map((id) => service.step('agt_1', id, { description: `write tests for feature ${n}` })))
  await round(1)
  expect(load).toHaveBeenCalledTimes(FLEET)
  load.mockClear()
  await round(2)
  expect(load).not.toHaveBeenCalled()
}, 120_000)

it('the cache also holds no more than its heap budget: large sessions past it are loaded again, small ones stay', async () => {
  const handle = await openTestDatabase()
  await insertAgent(handle)
  // Room for about three sessions of the largest size (about 1 M snapshot characters each).
  const service = new SessionsService({ db: handle.db, clock: () => Date.UTC(2026, 10, 27, 9), metrics: createMetrics(), cacheMaxBytes: 3 * sessionHeapEstimate(1_000_000) })
  let n = 1
  const text = (length: number) => {
    let out = ''
    while (out.length < length) out += `w${((n = (n * 48271 + 11) % 2_147_483_647) % 50_000).toString(36)} `
    return out.slice(0, length)
  }
  const large = []
  for (let i = 0; i < 6; i++) large.push((await service.create('agt_1', { goal: text(4000), plan: Array.from({ length: 500 }, () => text(2000)) })).id)
  const small = await Promise.all(Array.from({ length: 50 }, async (_, i) => (await service.create('agt_1', { goal: `Ship feature ${i}` })).id))
  const load = vi.spyOn(SessionRepository.prototype, 'stored')
  const round = async (ids: string[]) => {
    load.mockClear()
    for (const id of ids) await service.step('agt_1', id, { description: 'write the tests' })
    return load.mock.calls.length
  }
  expect(await round(large)).toBe(6)
  // Stepped in the same order again: each was evicted by the ones after it.
  expect(await round(large)).toBe(6)
  expect(await round(small)).toBe(50)
  expect(await round(small)).toBe(0)
}, 60_000)
