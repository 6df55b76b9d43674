import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { openDb, type DbHandle } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { createMetrics } from '../../src/metrics.js'
import { SessionsService } from '../../src/sessions/service.js'
import { journalEntries } from './journal-rows.js'

const GOAL = 'Build a REST API for user management with authentication'
const PLAN = ['design user schema', 'implement auth endpoints', 'write tests']
const T0 = Date.UTC(2026, 10, 22, 9)

function setup(opts: { deferMs?: number; cacheMax?: number; manualClock?: boolean } = {}) {
  const handle = openDb(':memory:')
  runMigrations(handle)
  handle.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)").run()
  let t = T0
  // Moves on every reading (a replay matches only if each reminder keeps its own clock reading),
  // or only on tick() when two services must see the same instants however often they read it.
  const clock = opts.manualClock ? () => t : () => (t += 11)
  const tick = () => (t += 13)
  const service = (deferMs = opts.deferMs ?? 60_000, cacheMax = opts.cacheMax) =>
    new SessionsService({ handle, clock, metrics: createMetrics(), reminderDeferMs: deferMs, ...(cacheMax === undefined ? {} : { cacheMax }) })
  return { handle, clock, tick, service }
}

const journalRows = (handle: DbHandle, id: string) => journalEntries(handle.sqlite, id)

/** A new service on a copy of the database: what a restart (or a crash at this instant) would see. */
function reopened(handle: DbHandle, clock: () => number): SessionsService {
  const copy = new Database(handle.sqlite.serialize())
  copy.pragma('foreign_keys = ON')
  return new SessionsService({ handle: { sqlite: copy, db: drizzle({ client: copy }), close: () => copy.close() }, clock, metrics: createMetrics() })
}

describe('deferred reminders', () => {
  it('a reminder writes nothing before its reply, and is journaled with the next write of the session', async () => {
    const t = setup()
    const svc = t.service()
    const id = svc.create('agt_1', { goal: GOAL, plan: PLAN }).id
    const version = () => (t.handle.sqlite.prepare('SELECT version FROM sessions WHERE id = ?').get(id) as { version: number }).version
    await svc.reminder('agt_1', id, 1, {})
    await svc.reminder('agt_1', id, 9, { drift_score: 0.5 })
    expect(journalRows(t.handle, id)).toBe(0)
    expect(version()).toBe(1)
    // The live session already counts them.
    expect(svc.summary('agt_1', id).reminders.total_reminders).toBe(2)
    await svc.step('agt_1', id, { description: 'design the user schema' })
    // One row for both reminders, one for the step.
    expect(journalRows(t.handle, id)).toBe(2)
    expect(version()).toBe(3)
    const restarted = reopened(t.handle, t.clock)
    expect(restarted.engines.fresh(restarted.engines.meta('agt_1', id)).toJSON()).toEqual(svc.engines.hydrate(svc.engines.meta('agt_1', id)).toJSON())
  })

  it('flushDeferred writes pending reminders; a crash before it loses only those', async () => {
    const t = setup()
    const svc = t.service()
    const id = svc.create('agt_1', { goal: GOAL, plan: PLAN }).id
    await svc.step('agt_1', id, { description: 'design the user schema' })
    await svc.reminder('agt_1', id, 3, {})
    const crashed = reopened(t.handle, t.clock)
    expect(crashed.summary('agt_1', id).reminders.total_reminders).toBe(0)
    expect(crashed.summary('agt_1', id).steps_completed).toBe(svc.summary('agt_1', id).steps_completed)
    await svc.flushDeferred()
    expect(journalRows(t.handle, id)).toBe(2)
    const restarted = reopened(t.handle, t.clock)
    expect(restarted.summary('agt_1', id).reminders).toEqual(svc.summary('agt_1', id).reminders)
  })

  it('the timer writes them within deferMs', async () => {
    const t = setup({ deferMs: 20 })
    const svc = t.service()
    const id = svc.create('agt_1', { goal: GOAL, plan: PLAN }).id
    await svc.reminder('agt_1', id, 3, {})
    expect(journalRows(t.handle, id)).toBe(0)
    await new Promise((r) => setTimeout(r, 80))
    expect(journalRows(t.handle, id)).toBe(1)
  })

  it('a session leaving the cache writes its deferred reminders', async () => {
    const t = setup({ cacheMax: 1 })
    const svc = t.service()
    const a = svc.create('agt_1', { goal: GOAL, plan: PLAN }).id
    const b = svc.create('agt_1', { goal: GOAL, plan: PLAN }).id
    await svc.reminder('agt_1', a, 3, {})
    await svc.reminder('agt_1', b, 3, {})
    expect(svc.summary('agt_1', a).reminders.total_reminders).toBe(1)
    expect(reopened(t.handle, t.clock).summary('agt_1', a).reminders.total_reminders).toBe(1)
  })

  it('archived sessions refuse reminders (409) and unknown ones are 404, as before', async () => {
    const t = setup()
    const svc = t.service()
    const id = svc.create('agt_1', { goal: GOAL, plan: PLAN }).id
    svc.update('agt_1', id, { status: 'archived' })
    await expect(svc.reminder('agt_1', id, 1, {})).rejects.toMatchObject({ status: 409 })
    await expect(svc.reminder('agt_1', 'ses_nope', 1, {})).rejects.toMatchObject({ status: 404 })
  })

  it('property: deferred and written-at-once reminders give the same results and, once flushed, the same stored session', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('reminder' as const), turn: fc.integer({ min: 1, max: 30 }) }),
      fc.record({ kind: fc.constant('step' as const), text: fc.constantFrom('design the user schema', 'browse reddit', 'write auth tests') }),
      fc.record({ kind: fc.constantFrom('goal' as const, 'summary' as const, 'flush' as const) }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const runOn = async (deferMs: number) => {
          const t = setup({ deferMs, manualClock: true })
          const svc = t.service()
          ;(svc.engines as unknown as { snapshotEvery: number }).snapshotEvery = 5
          const id = svc.create('agt_1', { goal: GOAL, plan: PLAN }).id
          const out: unknown[] = []
          for (const o of ops) {
            t.tick()
            if (o.kind === 'reminder') out.push(await svc.reminder('agt_1', id, o.turn, {}))
            else if (o.kind === 'step') out.push(await svc.step('agt_1', id, { description: o.text }))
            else if (o.kind === 'goal') out.push(svc.setGoal('agt_1', id, `${GOAL} v2`).goal)
            else if (o.kind === 'summary') out.push(svc.summary('agt_1', id))
            else await svc.flushDeferred()
          }
          await svc.flushDeferred()
          const stored = reopened(t.handle, t.clock)
          const state = stored.engines.fresh(stored.engines.meta('agt_1', id)).toJSON()
          t.handle.close()
          return { out, state }
        }
        const deferred = await runOn(60_000)
        const direct = await runOn(0)
        expect(deferred.out).toEqual(direct.out)
        expect(deferred.state).toEqual(direct.state)
      }),
      { numRuns: 40 },
    )
  })
})
