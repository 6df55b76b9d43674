/**
 * The two guarantees a session write makes, each with a test that fails without it: a write lands
 * only on the version it was computed from (never a lost update or a duplicated step number), and
 * a reply leaves only after its write has committed. On SQLite the second handle is a second
 * connection on the file (another process); on PostgreSQL a second pool (another replica).
 */
import { expect, it, vi } from 'vitest'
import { createMetrics } from '../../src/metrics.js'
import { SessionsService } from '../../src/sessions/service.js'
import { buildTestApp, openTestDatabase } from '../helpers.js'
import { insertAgent, sharedDatabase } from './shared-database.js'

const GOAL = 'Build a REST API for user management with authentication'

it('two LLM-verified steps computed on the same version both land, numbered 1 and 2: the later one is recomputed, never lost', async () => {
  const handle = await openTestDatabase()
  await insertAgent(handle)
  // Both steps are with the LLM at the same time, so both start from version 1.
  const waiting: Array<() => void> = []
  const llmVerify = () => new Promise<string>((resolve) => waiting.push(() => resolve('{"score": 0.9, "reasoning": "on plan"}')))
  const sessions = new SessionsService({ db: handle.db, clock: Date.now, metrics: createMetrics(), llmVerify })
  const id = (await sessions.create('agt_1', { goal: GOAL, config: { llm_verify: true } })).id
  const a = sessions.step('agt_1', id, { description: 'browse cat pictures on reddit' })
  const b = sessions.step('agt_1', id, { description: 'read football scores' })
  while (waiting.length < 2) await new Promise((r) => setTimeout(r, 5))
  waiting.splice(0).forEach((go) => go())
  // The loser asks again on top of the winner's version.
  const release = setInterval(() => waiting.splice(0).forEach((go) => go()), 5)
  try {
    const results = await Promise.all([a, b])
    expect(results.map((r) => r.step_number).sort()).toEqual([1, 2])
  } finally {
    clearInterval(release)
  }
  expect((await sessions.summary('agt_1', id)).verifications).toBe(2)
  expect(await handle.db.all('SELECT step_number FROM steps WHERE session_id = ? ORDER BY 1', [id])).toEqual([{ step_number: 1 }, { step_number: 2 }])
})

it('a session written through another connection (another process or replica) is never served stale from the cache', async () => {
  const shared = await sharedDatabase()
  const handle = shared.open()
  await insertAgent(handle)
  const other = shared.open()
  const mine = new SessionsService({ db: handle.db, clock: Date.now, metrics: createMetrics() })
  const theirs = new SessionsService({ db: other.db, clock: Date.now, metrics: createMetrics() })
  const id = (await mine.create('agt_1', { goal: GOAL })).id
  await mine.step('agt_1', id, { description: 'design the user schema' })
  expect((await mine.summary('agt_1', id)).verifications).toBe(1)
  // SQLite group-commits after the turn: the other connection could not write before that.
  await handle.db.committed()
  await theirs.step('agt_1', id, { description: 'implement auth endpoints' })
  await other.db.committed()
  expect((await mine.summary('agt_1', id)).verifications).toBe(2)
  const next = await mine.step('agt_1', id, { description: 'write tests' })
  expect(next.step_number).toBe(3)
})

it('a step is committed before its reply leaves: another connection sees it while the reply is being sent', async () => {
  const shared = await sharedDatabase()
  const t = await buildTestApp({ handle: shared.open() })
  const agent = await t.createAgent()
  const reader = shared.open()
  const seenOnSend: number[] = []
  let sessionId = ''
  t.app.addHook('onSend', async (request, _reply, payload) => {
    if (request.url.endsWith('/steps')) seenOnSend.push((await reader.db.get<{ n: number }>('SELECT count(*) AS n FROM steps WHERE session_id = ?', [sessionId]))!.n)
    return payload
  })
  await t.app.ready()
  sessionId = (await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: agent.headers, payload: { goal: GOAL } })).json().id
  for (let i = 1; i <= 3; i++) {
    const res = await t.app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/steps`, headers: agent.headers, payload: { description: `design the user schema, part ${i}` } })
    expect(res.statusCode).toBe(201)
  }
  expect(seenOnSend).toEqual([1, 2, 3])
})

it('a cached session archived or deleted through another connection: the next write here is a 409, then a 404, and writes nothing', async () => {
  const shared = await sharedDatabase()
  const handle = shared.open()
  await insertAgent(handle)
  const other = shared.open()
  const mine = new SessionsService({ db: handle.db, clock: Date.now, metrics: createMetrics() })
  const theirs = new SessionsService({ db: other.db, clock: Date.now, metrics: createMetrics() })
  const id = (await mine.create('agt_1', { goal: GOAL })).id
  await mine.step('agt_1', id, { description: 'design the user schema' })
  await handle.db.committed()
  // Archived over there while this service still holds version 2 in its cache.
  await theirs.update('agt_1', id, { status: 'archived' })
  await other.db.committed()
  await expect(mine.step('agt_1', id, { description: 'implement auth endpoints' })).rejects.toMatchObject({ status: 409 })
  await handle.db.committed()
  await theirs.delete('agt_1', id)
  await other.db.committed()
  await expect(mine.step('agt_1', id, { description: 'implement auth endpoints' })).rejects.toMatchObject({ status: 404 })
  expect(await handle.db.all('SELECT step_number FROM steps WHERE session_id = ?', [id])).toEqual([])
  expect(await other.db.all('SELECT step_number FROM steps WHERE session_id = ?', [id])).toEqual([])
})

it('a step on a cached session reads nothing first: one statement on PostgreSQL, with no transaction around it', async () => {
  const handle = await openTestDatabase()
  await insertAgent(handle)
  const sessions = new SessionsService({ db: handle.db, clock: Date.now, metrics: createMetrics() })
  const id = (await sessions.create('agt_1', { goal: GOAL })).id
  // The first step loads the session (a create caches nothing); the second finds it cached.
  await sessions.step('agt_1', id, { description: 'design the user schema' })
  const statements: string[] = []
  let depth = 0
  for (const method of ['all', 'get', 'run', 'transaction'] as const) {
    const original = handle.db[method].bind(handle.db) as (...args: unknown[]) => Promise<unknown>
    vi.spyOn(handle.db, method).mockImplementation((async (...args: unknown[]) => {
      // A statement, not the calls it makes of the others (PostgreSQL's get runs all).
      if (method === 'transaction') statements.push('BEGIN')
      else if (depth === 0) statements.push((args[0] as string).trim().split(/\s+/).slice(0, 3).join(' '))
      depth += method === 'transaction' ? 0 : 1
      try {
        return await original(...args)
      } finally {
        depth -= method === 'transaction' ? 0 : 1
      }
    }) as never)
  }
  const step = await sessions.step('agt_1', id, { description: 'implement auth endpoints' })
  expect(step.step_number).toBe(2)
  // SQLite: the session row, the step and its drift event (if it drifted) in a transaction of their own (a savepoint of the group commit).
  const sqlite = ['BEGIN', 'UPDATE sessions SET', 'INSERT INTO steps', ...(step.drift.event === null ? [] : ['INSERT INTO drift_events'])]
  expect(statements).toEqual(handle.db.dialect === 'postgres' ? ['WITH u AS'] : sqlite)
  vi.restoreAllMocks()
  expect(await handle.db.all('SELECT step_number FROM steps WHERE session_id = ? ORDER BY 1', [id])).toEqual([{ step_number: 1 }, { step_number: 2 }])
})
