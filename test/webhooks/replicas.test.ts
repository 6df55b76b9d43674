import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openPg, type PgHandle } from '../../src/db/postgres.js'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { Outbox } from '../../src/webhooks/outbox.js'
import { DEFAULT_DELIVERY_SETTINGS, type DeliverySettings } from '../../src/webhooks/retry-policy.js'
import { WebhooksService } from '../../src/webhooks/service.js'
import { backend } from '../helpers.js'
import { createPgDatabase, dropPgDatabase, pgUrl } from '../postgres/database.js'
import { Receiver } from './receiver.js'
import { verify } from './verify.js'
import { DeliveryRepository } from '../../src/webhooks/delivery-repository.js'

/**
 * Two service replicas on one PostgreSQL database: each has its own pool (openPg) and its own
 * dispatcher, as two processes would. Their clock is shared and driven by the test. Run once, in
 * the PostgreSQL project.
 */
describe.skipIf(pgUrl === null || backend !== 'postgres')('webhook delivery across PostgreSQL replicas', () => {
  const settings: DeliverySettings = { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: true }
  const clock = { now: 0 }
  const now = () => clock.now
  let url: string
  let handles: PgHandle[]
  let dispatchers: Dispatcher[]
  let rx: Receiver

  beforeEach(async () => {
    clock.now = Date.parse('2026-11-22T09:00:00.000Z')
    url = await createPgDatabase({ migrated: true })
    handles = [openPg(url, { max: 4 }), openPg(url, { max: 4 })]
    dispatchers = []
    rx = await new Receiver().start()
    await handles[0]!.db.run("INSERT INTO agents (id, name, created_at) VALUES ('agt_a', 'a', 0)")
  })
  afterEach(async () => {
    for (const d of dispatchers) await d.stop(1_000)
    await rx.stop()
    for (const h of handles) await h.close()
    await dropPgDatabase(url)
  })

  function replica(i: number, opts: { leaseMs?: number; concurrency?: number } = {}) {
    const d = new Dispatcher({ db: handles[i]!.db, settings, clock: now, random: () => 0.5, ...opts })
    dispatchers.push(d)
    return d
  }

  async function subscribe(): Promise<string> {
    return (await new WebhooksService(handles[0]!.db, now, settings).create('agt_a', { url: rx.url })).secret
  }

  async function enqueue(n: number): Promise<string[]> {
    const outbox = new Outbox(handles[1]!.db)
    const ids: string[] = []
    for (let i = 0; i < n; i++) ids.push((await outbox.enqueue('agt_a', 'reminder.triggered', { n: i }, clock.now)).message_id)
    return ids
  }

  it('delivers 200 messages exactly once each between two replicas, every one signed', async () => {
    const secret = await subscribe()
    const sent = await enqueue(200)
    // A little latency, so both replicas have deliveries in flight at once.
    rx.responder = (n, res) => {
      setTimeout(() => {
        res.statusCode = 204
        res.end()
      }, n % 4)
    }
    const counts = [0, 0]
    const [a, b] = [0, 1].map(
      (i) =>
        new Dispatcher({
          db: handles[i]!.db,
          settings,
          clock: now,
          concurrency: 4,
          onAttempt: () => counts[i]!++,
        }),
    )
    dispatchers.push(a!, b!)
    await Promise.all([a!.runDue(), b!.runDue()])

    const ids = rx.received.map((r) => String(r.headers['webhook-id']))
    expect(ids).toHaveLength(200)
    expect(new Set(ids)).toEqual(new Set(sent))
    for (const r of rx.received) expect(verify(secret, r)).toMatchObject({ type: 'reminder.triggered' })
    // Both replicas took part, and between them recorded every delivery once.
    expect(counts[0]).toBeGreaterThan(0)
    expect(counts[1]).toBeGreaterThan(0)
    expect(counts[0]! + counts[1]!).toBe(200)
    const db = handles[0]!.db
    expect(await db.all('SELECT state, attempts, count(*) AS n FROM webhook_deliveries GROUP BY state, attempts')).toEqual([{ state: 'succeeded', attempts: 1, n: 200 }])
    expect(await db.get('SELECT count(*) AS n, count(DISTINCT message_id) AS m FROM webhook_attempts')).toEqual({ n: 200, m: 200 })
  })

  it("leaves a dead replica's claim alone until its lease ends, then delivers it once with the same webhook-id", async () => {
    const secret = await subscribe()
    const [messageId] = await enqueue(1)
    // The dead replica claimed the delivery and was killed (kill -9) before recording anything.
    const dead = new DeliveryRepository(handles[1]!.db, settings, 60_000, () => 0.5)
    const [claimed] = await dead.claim(clock.now, 10)
    expect(claimed).toMatchObject({ messageId, attempts: 0 })
    await handles[1]!.close()
    handles.pop()
    dispatchers.pop()

    // The surviving replica starts: the claim is live, so it is neither released nor sent.
    const live = replica(0)
    expect(await live.recover()).toBe(0)
    await live.runDue()
    clock.now += 59_999
    await live.runDue()
    expect(rx.received).toHaveLength(0)
    expect(await handles[0]!.db.get('SELECT claimed_at FROM webhook_deliveries')).toEqual({ claimed_at: claimed!.claimedAt })

    clock.now += 1
    await live.runDue()
    await live.runDue()
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([messageId])
    expect(verify(secret, rx.received[0]!)).toEqual({ type: 'reminder.triggered', timestamp: '2026-11-22T09:00:00.000Z', data: { n: 0 } })
    expect(await handles[0]!.db.all('SELECT state, attempts, claimed_at FROM webhook_deliveries')).toEqual([{ state: 'succeeded', attempts: 1, claimed_at: null }])
  })
})
