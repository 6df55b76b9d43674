import { describe, expect, it } from 'vitest'
import { ReminderRepository } from '../../src/reminders/repository.js'
import { Ticker } from '../../src/reminders/ticker.js'
import { backend } from '../helpers.js'
import { insertDue, reminderParts } from './fixtures.js'
import { twoHandles } from './two-handles.js'

const due = Date.parse('2026-11-22T10:00:00Z')
const now = due + 200

/** Every `reminder.triggered` message per reminder id, and the fire records. */
async function outcome(db: ReminderRepository['db']) {
  const messages = await db.all<{ payload: string }>("SELECT payload FROM webhook_messages WHERE event_type = 'reminder.triggered'")
  const perReminder = new Map<string, number>()
  for (const m of messages) {
    const id = (JSON.parse(m.payload) as { data: { reminder: { id: string } } }).data.reminder.id
    perReminder.set(id, (perReminder.get(id) ?? 0) + 1)
  }
  const fires = await db.get<{ n: number }>('SELECT count(*) AS n FROM reminder_fires')
  const claimed = await db.get<{ n: number }>('SELECT count(*) AS n FROM reminders WHERE claimed_until IS NOT NULL')
  return { perReminder, fires: fires?.n, claimed: claimed?.n }
}

// Replicas: two pools on one PostgreSQL database, transactions really concurrent (SQLite runs one process).
describe.skipIf(backend !== 'postgres')('tickers on two replicas', () => {
  it('claim and fire 200 due reminders between them, each exactly once', async () => {
    const [one, two] = await twoHandles()
    const ids = await insertDue(one.db, 'agt_a', 200, due)
    // Small batches so the two interleave claim after claim.
    const a = new Ticker({ ...reminderParts(one.db, () => now), clock: () => now, batchSize: 7, tickBudgetMs: 60_000 })
    const b = new Ticker({ ...reminderParts(two.db, () => now), clock: () => now, batchSize: 7, tickBudgetMs: 60_000 })
    const results = await Promise.all([a.tick(now), b.tick(now), a.tick(now), b.tick(now)])
    const fired = results.reduce((n, r) => n + r.fired, 0)
    expect(fired).toBe(200)
    // Both took part (each claims with SKIP LOCKED around the other's locked rows).
    expect(results[0]!.fired + results[2]!.fired).toBeGreaterThan(0)
    expect(results[1]!.fired + results[3]!.fired).toBeGreaterThan(0)
    const { perReminder, fires, claimed } = await outcome(one.db)
    expect([...perReminder.keys()].sort()).toEqual(ids)
    expect([...perReminder.values()].every((n) => n === 1)).toBe(true)
    expect(fires).toBe(200)
    expect(claimed).toBe(0)
    expect((await a.tick(now)).fired + (await b.tick(now)).fired).toBe(0)
  })

  it('a replica that died between claim and fire: the other takes its claims once the lease ran out, and fires them once', async () => {
    const [one, two] = await twoHandles()
    const ids = await insertDue(one.db, 'agt_a', 20, due)
    const leaseMs = 3_000
    // Replica one claims a batch, then "dies" (kill -9): it never fires nor releases.
    const dead = await new ReminderRepository(one.db).claimDue(now, now + leaseMs, 12)
    expect(dead).toHaveLength(12)
    const survivor = new Ticker({ ...reminderParts(two.db, () => now), clock: () => now, leaseMs })
    // While the lease holds, only the unclaimed 8 fire; the dead replica's claims are left alone.
    expect((await survivor.tick(now)).fired).toBe(8)
    expect((await survivor.tick(now + leaseMs - 1)).fired).toBe(0)
    // Once it ran out, they are retaken and fired.
    expect((await survivor.tick(now + leaseMs)).fired).toBe(12)
    expect((await survivor.tick(now + leaseMs + 1_000)).fired).toBe(0)
    const { perReminder, fires, claimed } = await outcome(two.db)
    expect([...perReminder.keys()].sort()).toEqual(ids)
    expect([...perReminder.values()].every((n) => n === 1)).toBe(true)
    expect(fires).toBe(20)
    expect(claimed).toBe(0)
  })
})

describe("ticker leases on the run's backend", () => {
  it('a claim left by a dead ticker is retaken after its lease, not before', async () => {
    const [one] = await twoHandles()
    await insertDue(one.db, 'agt_a', 3, due)
    await new ReminderRepository(one.db).claimDue(now, now + 5_000, 10)
    // A restart (a new Ticker) does not release live claims at start: they run out on their own.
    const restarted = new Ticker({ ...reminderParts(one.db, () => now), clock: () => now })
    expect((await restarted.tick(now + 4_999)).fired).toBe(0)
    expect((await restarted.tick(now + 5_000)).fired).toBe(3)
  })
})
