import pg from 'pg'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findPgBin, HOW_TO_ENABLE, startPgCluster, type PgCluster } from '../postgres/cluster.js'
import { ADMIN_TOKEN, startReplica, type Replica } from '../replicas/replica.js'
import { Receiver } from '../webhooks/receiver.js'
import { call, expectFaultAnswer, sleep, until } from './http.js'
import { Load } from './load.js'

/**
 * PostgreSQL goes away under two replicas (real processes) and steady load: steps, reminder
 * creates, deliveries due. While it is away every request is answered 503 problem+json with
 * `Retry-After` within the request timeout and `/readyz` is 503; once it is back both replicas serve
 * again without a restart, every reminder due meanwhile fires once, each delivery reaches the
 * receiver once, and nothing acknowledged is lost. The cluster is this file's own: stopping it
 * disturbs no other test.
 */
const REQUEST_TIMEOUT_MS = 8000
const ENV = {
  GOALKEEPER_STATEMENT_TIMEOUT_MS: '2000',
  GOALKEEPER_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  GOALKEEPER_WEBHOOK_TIMEOUT_MS: '5000',
  // GOALKEEPER_LEASE_MS stays at its default (30 s): the outage is shorter than a lease.
}
const DB_FAULTS = ['urn:problem:database_unavailable', 'urn:problem:database_timeout']

const bin = findPgBin()
if (bin === undefined) throw new Error(`this test needs PostgreSQL: ${HOW_TO_ENABLE}`)

let cluster: PgCluster
let replicas: Replica[] = []
const rx = new Receiver()
let apiKey = ''
let signer: Webhook

describe('PostgreSQL going away and coming back under two replicas', () => {
  beforeAll(async () => {
    cluster = await startPgCluster(bin)
    // Deliveries take a moment, so some are in flight when the database goes: their records must wait for it.
    rx.responder = (_n, res) => {
      setTimeout(() => {
        res.statusCode = 204
        res.end()
      }, 300)
    }
    await rx.start()
    replicas = await Promise.all([0, 1].map(() => startReplica(cluster.url, ENV, { fromSource: true })))
    const [r0, r1] = replicas as [Replica, Replica]
    const agent = await call(r0.url, 'POST', '/v1/agents', ADMIN_TOKEN, { name: 'outage' })
    apiKey = agent.body!.api_key as string
    const hook = await call(r1.url, 'POST', '/v1/webhooks', apiKey, { url: rx.url, event_types: ['reminder.triggered'] })
    expect(hook.status).toBe(201)
    signer = new Webhook(hook.body!.secret as string)
    expect((await call(r0.url, 'PUT', '/v1/settings', apiKey, { max_reminders: 100_000 })).status).toBe(200)
  }, 120_000)

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()))
    await rx.stop()
    cluster?.stop()
  })

  const outages = [
    {
      name: 'stopped for 10 s',
      long: true,
      outage: async () => {
        await cluster.halt()
        await sleep(10_000)
        await cluster.resume()
      },
    },
    // Too short to be sure a request or a /readyz poll meets it; whatever met it is checked all the same.
    { name: 'restarted', long: false, outage: () => cluster.restart() },
  ]
  it.each(outages)(
    '$name: 503s while away, served again within 5 s of its return, nothing lost or doubled',
    async ({ name, long, outage }) => {
      const sessions: string[] = []
      for (let i = 0; i < 4; i++) {
        const s = await call(replicas[i % 2]!.url, 'POST', '/v1/sessions', apiKey, { goal: `Ship release ${i} of the billing service`, plan: ['build', 'test', 'deploy'] })
        expect(s.status).toBe(201)
        sessions.push(s.body!.id as string)
      }
      const load = new Load(replicas, apiKey, sessions)
      const receivedBefore = rx.received.length
      load.start()
      // Steps accepted and deliveries flowing before the database goes.
      expect(await until(() => load.stepCount >= 20 && rx.received.length >= receivedBefore + 5, 60_000)).toBe(true)

      // /readyz on both replicas, polled throughout.
      const readiness: Array<{ at: number; replica: number; status: number }> = []
      let polling = true
      const poller = (async () => {
        while (polling) {
          for (const [i, r] of replicas.entries()) readiness.push({ at: Date.now(), replica: i, status: (await fetch(`${r.url}/readyz`)).status })
          await sleep(250)
        }
      })()

      const down = Date.now()
      await outage()
      const up = Date.now()

      // Back: each replica serves a write (through its own pool, not a restart) within 5 s.
      const recovery = await Promise.all(
        replicas.map(async (r) => {
          for (;;) {
            const a = await call(r.url, 'POST', '/v1/sessions', apiKey, { goal: 'Probe the replica after the outage' })
            if (a.status === 201) return Date.now() - up
            expect(Date.now() - up).toBeLessThan(30_000)
            await sleep(50)
          }
        }),
      )
      await sleep(3000)
      await load.stop()
      polling = false
      await poller

      // While away: only 503 problem+json with Retry-After, within the request timeout; never a 500 or a hang.
      const during = load.refusalsBetween(down, up + 1000)
      for (const r of load.refusals) {
        // A 409 with Retry-After is a write race or a key still in flight, which a repeat resolves.
        if (r.answer.status === 409) expect(r.answer.headers.get('retry-after')).toBe('1')
        else expectFaultAnswer(r.answer, 503, DB_FAULTS)
      }
      expect(load.slowestMs).toBeLessThan(REQUEST_TIMEOUT_MS + 2000)
      if (long) {
        expect(during.length).toBeGreaterThan(0)
        for (const i of [0, 1]) expect(readiness.some((p) => p.replica === i && p.at > down && p.at < up && p.status === 503)).toBe(true)
      }
      for (const r of replicas) expect(r.child.exitCode).toBeNull()
      for (const ms of recovery) expect(ms).toBeLessThan(5000)

      // Every reminder acknowledged fires once, and its delivery reaches the receiver once.
      const acked = [...load.reminders.keys()]
      const dueDuringOutage = [...load.reminders.values()].filter((due) => due >= down && due <= up).length
      const deliveredIds = () => new Set(rx.received.slice(receivedBefore).map((m) => (JSON.parse(m.body) as { data: { reminder: { id: string } } }).data.reminder.id))
      expect(await until(() => acked.every((id) => deliveredIds().has(id)), 90_000, 250)).toBe(true)
      // A moment more for any second delivery to show up.
      await sleep(2000)
      const byReminder = new Map<string, string[]>()
      const webhookIds = new Map<string, number>()
      for (const m of rx.received.slice(receivedBefore)) {
        const headers = { 'webhook-id': String(m.headers['webhook-id']), 'webhook-timestamp': String(m.headers['webhook-timestamp']), 'webhook-signature': String(m.headers['webhook-signature']) }
        const event = signer.verify(m.body, headers) as { type: string; data: { reminder: { id: string } } }
        byReminder.set(event.data.reminder.id, [...(byReminder.get(event.data.reminder.id) ?? []), headers['webhook-id']])
        webhookIds.set(headers['webhook-id'], (webhookIds.get(headers['webhook-id']) ?? 0) + 1)
      }
      expect([...webhookIds].filter(([, n]) => n > 1)).toEqual([])
      expect([...byReminder].filter(([, ids]) => ids.length > 1)).toEqual([])
      const db = new pg.Client({ connectionString: cluster.url })
      await db.connect()
      try {
        const fires = await db.query<{ reminder_id: string; n: number }>('SELECT reminder_id, count(*)::int AS n FROM reminder_fires WHERE reminder_id = ANY($1) GROUP BY reminder_id', [acked])
        expect(fires.rows.length).toBe(acked.length)
        expect(fires.rows.filter((r) => r.n !== 1)).toEqual([])
        // Each delivery recorded as sent, after one attempt: none left to be sent again when a lease ends.
        const deliveries = await db.query<{ state: string; attempts: number }>('SELECT state, attempts FROM webhook_deliveries')
        expect(deliveries.rows.filter((d) => d.state !== 'succeeded' || d.attempts !== 1)).toEqual([])
      } finally {
        await db.end()
      }

      // Every acknowledged step is in its session, numbered 1..N without gaps.
      for (const [session, acks] of load.steps) {
        const log: Array<{ step_number: number; description: string }> = []
        let cursor: string | null = null
        do {
          const page = await call(replicas[0]!.url, 'GET', `/v1/sessions/${session}/steps?limit=100${cursor ? `&cursor=${cursor}` : ''}`, apiKey)
          expect(page.status).toBe(200)
          log.push(...(page.body!.items as typeof log))
          cursor = page.body!.next_cursor as string | null
        } while (cursor)
        expect(log.map((s) => s.step_number)).toEqual(log.map((_, i) => i + 1))
        for (const [n, description] of acks) expect(log[n - 1]?.description).toBe(description)
      }
      console.log(
        `PostgreSQL ${name}: away ${up - down} ms; back on the replicas after ${recovery.join(' and ')} ms; ` +
          `${load.answered} answers, ${during.length} refused while away (slowest answer ${Math.round(load.slowestMs)} ms); ` +
          `${load.stepCount} steps and ${acked.length} reminders acknowledged, ${dueDuringOutage} due while away; ` +
          `${rx.received.length - receivedBefore} deliveries, each once`,
      )
    },
    240_000,
  )
})
