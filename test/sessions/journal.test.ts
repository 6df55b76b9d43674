import { expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { createMetrics } from '../../src/metrics.js'
import { SessionsService } from '../../src/sessions/service.js'
import { SNAPSHOT_EVERY } from '../../src/sessions/store.js'

const GOAL = 'Build a REST API for user management with authentication'
const WORDS = ['design', 'user', 'schema', 'auth', 'endpoints', 'JWT', 'tests', 'reddit', 'cat', 'pictures', 'football', 'login']

it('a session rebuilt from its snapshot and the steps journaled after it equals the one that served them', async () => {
  const handle = openDb(':memory:')
  runMigrations(handle)
  handle.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)").run()
  // A clock that moves on every reading: an operation that read it twice, unpinned, would not replay alike.
  let t = Date.UTC(2026, 10, 22, 9)
  const clock = () => (t += 7)
  const live = new SessionsService({ sqlite: handle.sqlite, clock, metrics: createMetrics() })
  const cold = new SessionsService({ sqlite: handle.sqlite, clock, metrics: createMetrics(), cacheMax: 0 })
  const id = live.create('agt_1', { goal: GOAL, plan: ['design user schema', 'implement auth endpoints', 'write tests'] }).id
  // The whole engine state, as a snapshot would hold it.
  const engineState = (s: SessionsService) => s.store.hydrate(s.store.key('agt_1', id)).toJSON()
  const snapshotVersion = () => (handle.sqlite.prepare('SELECT version FROM session_snapshots WHERE session_id = ?').get(id) as { version: number }).version
  for (let i = 0; i < 2 * SNAPSHOT_EVERY + 5; i++) {
    await live.step('agt_1', id, { description: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} ${i}`, output: i % 3 ? 'ok' : '' })
    if (i === 10) live.addPitfall('agt_1', id, 'tokens expire silently')
    if (i === 20) await live.driftCheck('agt_1', id, 'browse cat pictures')
    if (i % 9 === 0) expect(engineState(cold)).toEqual(engineState(live))
  }
  expect(snapshotVersion()).toBeLessThan((handle.sqlite.prepare('SELECT version FROM sessions WHERE id = ?').get(id) as { version: number }).version)
  expect(engineState(cold)).toEqual(engineState(live))
  // And it goes on alike: the next step's verdict is the same from either.
  const fresh = new SessionsService({ sqlite: handle.sqlite, clock, metrics: createMetrics() })
  t = Date.UTC(2027, 0, 2)
  const next = await fresh.step('agt_1', id, { description: 'write tests for the login endpoint' })
  expect(next.step_number).toBe(2 * SNAPSHOT_EVERY + 6)
  handle.close()
})
