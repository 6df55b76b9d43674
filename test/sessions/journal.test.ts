import { afterEach, expect, it, vi } from 'vitest'
import { GoalSession } from '../../src/engine/session/goal-session.js'
import { createMetrics } from '../../src/metrics.js'
import { SessionsService } from '../../src/sessions/service.js'
import { SNAPSHOT_EVERY } from '../../src/sessions/store.js'
import { openTestDatabase } from '../helpers.js'
import { insertAgent } from './shared-database.js'

afterEach(() => vi.restoreAllMocks())

const GOAL = 'Build a REST API for user management with authentication'
const WORDS = ['design', 'user', 'schema', 'auth', 'endpoints', 'JWT', 'tests', 'reddit', 'cat', 'pictures', 'football', 'login']

it('a session rebuilt from its snapshot and the steps journaled after it equals the one that served them', async () => {
  const handle = await openTestDatabase()
  await insertAgent(handle)
  // A clock that moves on every reading: an operation that read it twice, unpinned, would not replay alike.
  let t = Date.UTC(2026, 10, 22, 9)
  const clock = () => (t += 7)
  const live = new SessionsService({ db: handle.db, clock, metrics: createMetrics() })
  const cold = new SessionsService({ db: handle.db, clock, metrics: createMetrics(), cacheMax: 0 })
  const id = (await live.create('agt_1', { goal: GOAL, plan: ['design user schema', 'implement auth endpoints', 'write tests'] })).id
  // The whole engine state, as a snapshot would hold it, of the engine a service's read ran on
  // (the live one's cached engine; the cold one's rebuilt from the snapshot and journal).
  const summaries = vi.spyOn(GoalSession.prototype, 'summary')
  const engineState = async (s: SessionsService) => {
    await s.summary('agt_1', id)
    return (summaries.mock.contexts.at(-1) as GoalSession).toJSON()
  }
  const versionOf = async (table: 'sessions' | 'session_snapshots', column: 'id' | 'session_id') =>
    (await handle.db.get<{ version: number }>(`SELECT version FROM ${table} WHERE ${column} = ?`, [id]))!.version
  for (let i = 0; i < 2 * SNAPSHOT_EVERY + 5; i++) {
    await live.step('agt_1', id, { description: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} ${i}`, output: i % 3 ? 'ok' : '' })
    if (i === 10) await live.addPitfall('agt_1', id, 'tokens expire silently')
    if (i === 20) await live.driftCheck('agt_1', id, 'browse cat pictures')
    if (i % 9 === 0) expect(await engineState(cold)).toEqual(await engineState(live))
  }
  expect(await versionOf('session_snapshots', 'session_id')).toBeLessThan(await versionOf('sessions', 'id'))
  expect(await engineState(cold)).toEqual(await engineState(live))
  // And it goes on alike: the next step's verdict is the same from either.
  const fresh = new SessionsService({ db: handle.db, clock, metrics: createMetrics() })
  t = Date.UTC(2027, 0, 2)
  const next = await fresh.step('agt_1', id, { description: 'write tests for the login endpoint' })
  expect(next.step_number).toBe(2 * SNAPSHOT_EVERY + 6)
})
