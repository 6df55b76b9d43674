/**
 * The two guarantees a session write makes, each with a test that fails without it: a write lands
 * only on the version it was computed from (never a lost update or a duplicated step number), and
 * a reply leaves only after its write has committed.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { createMetrics } from '../../src/metrics.js'
import { SessionsService } from '../../src/sessions/service.js'
import { buildTestApp } from '../helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'gk-guarantees-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const GOAL = 'Build a REST API for user management with authentication'

function fileDb(name: string) {
  const file = join(dir, name)
  const handle = openDb(file)
  runMigrations(handle)
  handle.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)").run()
  return { file, handle }
}

it('two LLM-verified steps computed on the same version both land, numbered 1 and 2: the later one is recomputed, never lost', async () => {
  const { handle } = fileDb('race.db')
  // Both steps are with the LLM at the same time, so both start from version 1.
  const waiting: Array<() => void> = []
  const llmVerify = () => new Promise<string>((resolve) => waiting.push(() => resolve('{"score": 0.9, "reasoning": "on plan"}')))
  const sessions = new SessionsService({ sqlite: handle.sqlite, clock: Date.now, metrics: createMetrics(), llmVerify })
  const id = sessions.create('agt_1', { goal: GOAL, config: { llm_verify: true } }).id
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
  expect(sessions.summary('agt_1', id).verifications).toBe(2)
  expect(handle.sqlite.prepare('SELECT step_number FROM steps WHERE session_id = ? ORDER BY 1').all(id)).toEqual([{ step_number: 1 }, { step_number: 2 }])
  handle.close()
})

it('a session written through another connection (another process) is never served stale from the cache', async () => {
  const { file, handle } = fileDb('two.db')
  const mine = new SessionsService({ sqlite: handle.sqlite, clock: Date.now, metrics: createMetrics() })
  const other = openDb(file)
  const theirs = new SessionsService({ sqlite: other.sqlite, clock: Date.now, metrics: createMetrics() })
  const id = mine.create('agt_1', { goal: GOAL }).id
  await mine.step('agt_1', id, { description: 'design the user schema' })
  expect(mine.summary('agt_1', id).verifications).toBe(1)
  await theirs.step('agt_1', id, { description: 'implement auth endpoints' })
  expect(mine.summary('agt_1', id).verifications).toBe(2)
  const next = await mine.step('agt_1', id, { description: 'write tests' })
  expect(next.step_number).toBe(3)
  other.close()
  handle.close()
})

it('a step is committed before its reply leaves: another connection sees it while the reply is being sent', async () => {
  const { file, handle } = fileDb('reply.db')
  const t = await buildTestApp({ handle })
  const agent = await t.createAgent()
  const reader = openDb(file)
  const count = reader.sqlite.prepare<[string], { n: number }>('SELECT count(*) AS n FROM steps WHERE session_id = ?')
  const seenOnSend: number[] = []
  let sessionId = ''
  t.app.addHook('onSend', async (request, _reply, payload) => {
    if (request.url.endsWith('/steps')) seenOnSend.push(count.get(sessionId)!.n)
    return payload
  })
  await t.app.ready()
  sessionId = (await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: agent.headers, payload: { goal: GOAL } })).json().id
  for (let i = 1; i <= 3; i++) {
    const res = await t.app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/steps`, headers: agent.headers, payload: { description: `design the user schema, part ${i}` } })
    expect(res.statusCode).toBe(201)
  }
  expect(seenOnSend).toEqual([1, 2, 3])
  reader.close()
})
