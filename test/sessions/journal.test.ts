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
const WORDS = ['design', 'user', 'schema', 'auth', 'endpoints', 'JWT', 'tests', 'reddit', 'cat', 'pictures', 'football', 'login', 'deploy']
const T0 = Date.UTC(2026, 10, 22, 9)

/**
 * A clock that moves on every reading (so an op that read it twice would see two instants), and
 * can be frozen to compare results across services.
 */
function steppingClock() {
  let t = T0
  let frozen: number | undefined
  return {
    clock: () => frozen ?? (t += 7),
    freeze: (at: number | undefined) => { frozen = at },
  }
}

function setup(opts: { cacheMax?: number; snapshotEvery?: number } = {}) {
  const handle = openDb(':memory:')
  runMigrations(handle)
  handle.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)").run()
  const c = steppingClock()
  const service = (cacheMax = opts.cacheMax) => {
    const svc = new SessionsService({ handle, clock: c.clock, metrics: createMetrics(), ...(cacheMax === undefined ? {} : { cacheMax }) })
    if (opts.snapshotEvery !== undefined) (svc.engines as unknown as { writer: { snapshotEvery: number } }).writer.snapshotEvery = opts.snapshotEvery
    return svc
  }
  return { handle, ...c, service }
}

const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }).map((w) => w.join(' '))

/** Every engine-changing call of the service, journaled or not, and some reads in between. */
const opArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('step' as const), text, output: fc.constantFrom('', 'ok', 'error: failed') }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('drift' as const), text, step: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('reminder' as const), turn: fc.integer({ min: 1, max: 40 }), drift: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }) }) },
  fc.record({ kind: fc.constantFrom('reset_drift' as const, 'reset_loop' as const, 'summary' as const, 'trend' as const) }),
  fc.record({ kind: fc.constantFrom('pitfall' as const, 'tried' as const, 'plan' as const, 'goal' as const), text }),
  fc.record({ kind: fc.constant('context' as const), memories: fc.array(text, { maxLength: 3 }) }),
  fc.record({ kind: fc.constant('recite' as const), iteration: fc.integer({ min: 1, max: 40 }) }),
)
type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never

function run(svc: SessionsService, id: string, op: Op): unknown {
  const a = 'agt_1'
  switch (op.kind) {
    case 'step': return svc.step(a, id, { description: op.text, output: op.output })
    case 'drift': return svc.driftCheck(a, id, op.text, op.step)
    case 'reminder': return svc.reminder(a, id, op.turn, op.drift === undefined ? {} : { drift_score: op.drift })
    case 'reset_drift': return svc.resetDrift(a, id)
    case 'reset_loop': return svc.resetLoop(a, id)
    case 'summary': return svc.summary(a, id)
    case 'trend': return svc.trend(a, id, 5)
    case 'pitfall': return svc.addPitfall(a, id, op.text)
    case 'tried': return svc.addTriedApproach(a, id, op.text)
    case 'plan': return svc.setPlan(a, id, [op.text, ...PLAN])
    case 'goal': return svc.setGoal(a, id, `${GOAL} ${op.text}`)
    case 'context': return svc.setContext(a, id, { memories: op.memories })
    case 'recite': return svc.injectRecitation(a, id, { iteration: op.iteration, messages: [{ role: 'user', content: 'go on' }] })
  }
}

const engineState = (svc: SessionsService, id: string, fresh: boolean) => {
  const meta = svc.engines.meta('agt_1', id)
  return (fresh ? svc.engines.fresh(meta) : svc.engines.hydrate(meta)).toJSON()
}
const journalRows = (handle: DbHandle, id: string) => journalEntries(handle.sqlite, id)

describe('session journal', () => {
  it('snapshot + replayed journal equals the in-memory session, and a restarted service continues exactly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 12 }), async (ops, every) => {
        const t = setup({ snapshotEvery: every })
        const live = t.service(10)
        const id = live.create('agt_1', { goal: GOAL, plan: PLAN }).id
        for (const op of ops) await run(live, id, op)
        // The replay runs on a moving clock: equal only if each op is replayed at its recorded time.
        expect(engineState(live, id, true)).toEqual(engineState(live, id, false))
        expect(journalRows(t.handle, id)).toBeLessThan(every)

        // A restart: a new service with an empty cache, on a copy of the database file.
        const copy = new Database(t.handle.sqlite.serialize())
        copy.pragma('foreign_keys = ON')
        const restarted = new SessionsService({ handle: { sqlite: copy, db: drizzle({ client: copy }), close: () => copy.close() }, clock: t.clock, metrics: createMetrics() })
        t.freeze(T0 + 10_000_000)
        const probe: Op[] = [{ kind: 'step', text: 'implement login auth endpoints', output: '' }, { kind: 'reminder', turn: 50, drift: undefined }]
        for (const p of probe) expect(await run(restarted, id, p)).toEqual(await run(live, id, p))
        t.handle.close()
        copy.close()
      }),
      { numRuns: 60 },
    )
  })

  it('journals steps, drift checks and reminders, and snapshots every N ops', async () => {
    const t = setup({ snapshotEvery: 4 })
    const svc = t.service()
    const id = svc.create('agt_1', { goal: GOAL, plan: PLAN }).id
    const snapshotVersion = () => (t.handle.sqlite.prepare('SELECT version FROM session_snapshots WHERE session_id = ?').get(id) as { version: number }).version
    await svc.step('agt_1', id, { description: 'design the user schema' })
    await svc.driftCheck('agt_1', id, 'browse reddit')
    await svc.reminder('agt_1', id, 2, {})
    expect(journalRows(t.handle, id)).toBe(3)
    expect(snapshotVersion()).toBe(1)
    // The 4th op since the snapshot writes one and drops the journal it covers.
    await svc.step('agt_1', id, { description: 'implement auth endpoints' })
    expect(journalRows(t.handle, id)).toBe(0)
    expect(snapshotVersion()).toBe(5)
    // An op that is not journaled (a new plan) snapshots at once.
    await svc.reminder('agt_1', id, 3, {})
    svc.setPlan('agt_1', id, ['one', 'two'])
    expect(journalRows(t.handle, id)).toBe(0)
    expect(snapshotVersion()).toBe(7)
    t.handle.close()
  })

  it('snapshots a session the cache evicts with journaled ops, so the next load replays nothing', async () => {
    const t = setup({ cacheMax: 2 })
    const svc = t.service()
    const ids = [0, 1, 2].map(() => svc.create('agt_1', { goal: GOAL, plan: PLAN }).id)
    const reference = setup({ cacheMax: 10 })
    const ref = reference.service()
    const refIds = [0, 1, 2].map(() => ref.create('agt_1', { goal: GOAL, plan: PLAN }).id)
    t.freeze(T0)
    reference.freeze(T0)
    for (let round = 0; round < 5; round++) {
      for (const [i, id] of ids.entries()) {
        const description = `${WORDS[(round * 3 + i) % WORDS.length]} the user schema`
        expect(await svc.step('agt_1', id, { description })).toEqual(await ref.step('agt_1', refIds[i]!, { description }))
        // Round robin over 3 sessions with room for 2: the session touched next was just evicted.
        expect(journalRows(t.handle, ids[(i + 1) % 3]!)).toBe(0)
      }
    }
    // The two still cached hold their journaled ops; the evicted one has none left.
    expect(ids.map((id) => journalRows(t.handle, id))).toEqual([0, 1, 1])
    for (const [i, id] of ids.entries()) expect(engineState(svc, id, true)).toEqual(engineState(ref, refIds[i]!, false))
    t.handle.close()
    reference.handle.close()
  })

  it('works with the cache off: every request loads snapshot + journal', async () => {
    const t = setup({ cacheMax: 0, snapshotEvery: 5 })
    const svc = t.service(0)
    const reference = setup({ cacheMax: 10 })
    const ref = reference.service(10)
    const id = svc.create('agt_1', { goal: GOAL, plan: PLAN }).id
    const rid = ref.create('agt_1', { goal: GOAL, plan: PLAN }).id
    t.freeze(T0)
    reference.freeze(T0)
    for (const d of ['design the user schema', 'browse cat pictures on reddit', 'browse cat pictures on reddit', 'browse cat pictures on reddit', 'write tests', 'watch football']) {
      expect(await svc.step('agt_1', id, { description: d })).toEqual(await ref.step('agt_1', rid, { description: d }))
      expect(await svc.reminder('agt_1', id, 3, {})).toEqual(await ref.reminder('agt_1', rid, 3, {}))
    }
    expect(svc.summary('agt_1', id)).toEqual(ref.summary('agt_1', rid))
    t.handle.close()
    reference.handle.close()
  })

  it('replays step ops journaled before steps carried a version (session_ops rows, null versions)', async () => {
    const t = setup({ snapshotEvery: 32 })
    const svc = t.service(10)
    const id = svc.create('agt_1', { goal: GOAL, plan: PLAN }).id
    for (const d of ['design the user schema', 'browse reddit', 'implement auth endpoints']) {
      await svc.step('agt_1', id, { description: d, output: 'ok' })
      await svc.driftCheck('agt_1', id, 'read the news')
    }
    const expected = engineState(svc, id, false)
    // Rewrite the step rows past the snapshot into the layout of migration 0009: op rows, no version.
    const db = t.handle.sqlite
    const rows = db.prepare('SELECT version, created_at, description, output FROM steps WHERE session_id = ? AND version IS NOT NULL').all(id) as Array<{ version: number; created_at: number; description: string; output: string }>
    expect(rows.length).toBe(3)
    for (const r of rows) {
      db.prepare('INSERT INTO session_ops (session_id, version, at, op) VALUES (?, ?, ?, ?)').run(id, r.version, r.created_at, JSON.stringify({ kind: 'step', description: r.description, output: r.output }))
    }
    db.prepare('UPDATE steps SET version = NULL WHERE session_id = ?').run(id)
    expect(engineState(svc, id, true)).toEqual(expected)
    t.handle.close()
  })
})
