/**
 * A session under concurrent writes, on the run's backend (PostgreSQL runs the transactions of one
 * process concurrently, and several replicas share one database): no step is lost, none numbered
 * twice or skipped, a read never sees a write that has not committed, and a lost version race is
 * retried before it becomes a 409.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SessionRepository } from '../../src/sessions/repository.js'
import { WRITE_ATTEMPTS } from '../../src/sessions/store.js'
import { backend, buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { sharedDatabase } from '../sessions/shared-database.js'
import { createSession, GOAL, PLAN } from './sessions-fixtures.js'

afterEach(() => vi.restoreAllMocks())

const step = (t: TestApp, a: TestAgent, id: string, description: string) => t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: a.headers, payload: { description } })

async function logOf(t: TestApp, a: TestAgent, id: string): Promise<Array<{ step_number: number; description: string }>> {
  const res = await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/steps?limit=100`, headers: a.headers })
  return res.json().items
}

const verifications = async (t: TestApp, a: TestAgent, id: string): Promise<number> =>
  (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/summary`, headers: a.headers })).json().verifications

/** Every 201 is in the log under the number it was given; the log runs 1..n without gaps. */
function expectNumbered(results: Array<{ statusCode: number; description: string; step_number?: number }>, log: Array<{ step_number: number; description: string }>) {
  for (const r of results) expect([201, 409]).toContain(r.statusCode)
  const landed = results.filter((r) => r.statusCode === 201)
  expect(log.map((s) => s.step_number)).toEqual(landed.map((_, i) => i + 1))
  for (const r of landed) expect(log[r.step_number! - 1]!.description).toBe(r.description)
}

describe(`concurrent writes of one session (${backend})`, () => {
  it('20 steps at once: each lands once, numbered 1..20, and the engine counted each', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a, { goal: GOAL, plan: PLAN })
    const descriptions = Array.from({ length: 20 }, (_, i) => `implement auth endpoint number ${i}`)
    const results = await Promise.all(
      descriptions.map(async (d) => {
        const res = await step(t, a, id, d)
        return { statusCode: res.statusCode, description: d, step_number: res.statusCode === 201 ? (res.json().step_number as number) : undefined }
      }),
    )
    // One process serializes its writes of a session: none has a race to lose.
    expect(results.map((r) => r.statusCode)).toEqual(descriptions.map(() => 201))
    expectNumbered(results, await logOf(t, a, id))
    expect(await verifications(t, a, id)).toBe(20)
  })

  it('a read while a step is being written sees the session as it was before the step, never the step half-done', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a, { goal: GOAL, plan: PLAN })
    expect((await step(t, a, id, 'design the user schema')).statusCode).toBe(201)
    // Hold the next step at the statement writing its step row: the engine has run; on SQLite the
    // session row is written already, in the open transaction; on PostgreSQL that statement is the
    // whole write (the session row, the step and its drift event in one).
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    let held!: () => void
    const holding = new Promise<void>((resolve) => (held = resolve))
    const hold = async (sql: string) => {
      if (sql.includes('INSERT INTO steps')) {
        held()
        await gate
      }
    }
    const run = t.db.run.bind(t.db)
    const get = t.db.get.bind(t.db)
    vi.spyOn(t.db, 'run').mockImplementation(async (sql, params) => (await hold(sql), run(sql, params)))
    vi.spyOn(t.db, 'get').mockImplementation(async (sql, params) => (await hold(sql), get(sql, params)))
    const writing = step(t, a, id, 'implement auth endpoints with JWT')
    await holding
    const read = verifications(t, a, id)
    const early = await Promise.race([read, new Promise((resolve) => setTimeout(() => resolve('waiting'), 300))])
    // PostgreSQL answers from the committed state; SQLite's one connection queues the read's load behind the write.
    expect(early).toBe(backend === 'postgres' ? 1 : 'waiting')
    open()
    expect((await writing).statusCode).toBe(201)
    expect(await read).toBe(backend === 'postgres' ? 1 : 2)
    expect(await verifications(t, a, id)).toBe(2)
  })

  it('a lost version race is tried again on a fresh load; only one lost WRITE_ATTEMPTS times answers 409', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a, { goal: GOAL, plan: PLAN })
    const lose = vi.spyOn(SessionRepository.prototype, 'writeStep').mockResolvedValueOnce(false)
    const won = await step(t, a, id, 'design the user schema')
    expect(won.statusCode).toBe(201)
    expect(won.json().step_number).toBe(1)
    expect(lose).toHaveBeenCalledTimes(2)
    lose.mockResolvedValue(false)
    const lost = await step(t, a, id, 'implement auth endpoints with JWT')
    expect(lost.statusCode).toBe(409)
    expect(lost.json().detail).toMatch(/retry/)
    expect(lost.headers['retry-after']).toBe('1')
    expect(lose).toHaveBeenCalledTimes(2 + WRITE_ATTEMPTS)
    lose.mockRestore()
    expect((await step(t, a, id, 'implement auth endpoints with JWT')).json().step_number).toBe(2)
    expect((await logOf(t, a, id)).map((s) => s.step_number)).toEqual([1, 2])
  })

  // Replicas share a PostgreSQL database; two SQLite connections in one process would block its event loop on the file lock.
  it.skipIf(backend !== 'postgres')('two replicas on one database stepping one session at once: nothing lost or doubled, each sees the other at once', async () => {
    const shared = await sharedDatabase()
    const one = await buildTestApp({ handle: shared.open() })
    const two = await buildTestApp({ handle: shared.open() })
    const a = await one.createAgent()
    const id = await createSession(one, a, { goal: GOAL, plan: PLAN })
    // Both caches hold the session before the storm.
    expect(await verifications(one, a, id)).toBe(0)
    expect(await verifications(two, a, id)).toBe(0)
    const descriptions = Array.from({ length: 16 }, (_, i) => `write tests for endpoint ${i}`)
    const results = await Promise.all(
      descriptions.map(async (d, i) => {
        const res = await step(i % 2 === 0 ? one : two, a, id, d)
        return { statusCode: res.statusCode, description: d, step_number: res.statusCode === 201 ? (res.json().step_number as number) : undefined }
      }),
    )
    const landed = results.filter((r) => r.statusCode === 201).length
    expect(landed).toBeGreaterThan(0)
    expectNumbered(results, await logOf(two, a, id))
    expect(await logOf(one, a, id)).toEqual(await logOf(two, a, id))
    expect(await verifications(one, a, id)).toBe(landed)
    expect(await verifications(two, a, id)).toBe(landed)
    // And a step on one is seen by the next read on the other.
    expect((await step(one, a, id, 'write the docs')).json().step_number).toBe(landed + 1)
    expect(await verifications(two, a, id)).toBe(landed + 1)
  })
})
