import { randomUUID } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPgDatabase, dropPgDatabase, pgUrl } from '../postgres/database.js'
import { Receiver } from '../webhooks/receiver.js'
import { ADMIN_TOKEN, buildServer, startReplica, type Replica } from './replica.js'

/**
 * Three replicas (real `node dist/server.js` processes) on one PostgreSQL database, a receiver on
 * 127.0.0.1: steps sent round-robin and concurrently to all three, 1,000 reminders due within
 * ~10 s, one replica killed with SIGKILL mid-run. Nothing may be lost or doubled.
 */
const REMINDERS = 1000
const STEPS = 240
const SESSIONS = 3

let replicas: Replica[] = []
let databaseUrl = ''
const rx = new Receiver()

describe.skipIf(pgUrl === null)('three replicas on one PostgreSQL database', () => {
  beforeAll(async () => {
    buildServer()
    await rx.start()
    // An empty database: the three start at once and migrate under the advisory lock.
    databaseUrl = await createPgDatabase()
    // Short leases and timeouts, so a killed replica's claims come back within seconds.
    const env = { GOALKEEPER_WEBHOOK_TIMEOUT_MS: '2000', GOALKEEPER_LEASE_MS: '3000' }
    replicas = await Promise.all([0, 1, 2].map(() => startReplica(databaseUrl, env)))
  }, 120_000)

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()))
    await rx.stop()
    if (databaseUrl) await dropPgDatabase(databaseUrl)
  })

  it('loses no step, no reminder and doubles no delivery when one replica is killed mid-run', { timeout: 180_000 }, async () => {
    const call = async (replica: Replica, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${replica.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null }
    }
    const [r0, r1] = replicas as [Replica, Replica, Replica]
    const agent = await call(r0, 'POST', '/v1/agents', ADMIN_TOKEN, { name: 'replicated' })
    expect(agent.status).toBe(201)
    const apiKey = agent.body!.api_key as string
    // Created on one replica, used at once on another: nothing is held per process.
    const hook = await call(r1, 'POST', '/v1/webhooks', apiKey, { url: rx.url, event_types: ['reminder.triggered'] })
    expect(hook.status).toBe(201)
    const signer = new Webhook(hook.body!.secret as string)
    expect((await call(r0, 'PUT', '/v1/settings', apiKey, { max_reminders: 10 * REMINDERS })).status).toBe(200)

    // 1,000 reminders, each due 8 to 14 s after its own creation (so some are still pending when
    // the replica dies, however long the creates take), created concurrently through all three.
    const reminderIds = new Set<string>()
    let alive = [...replicas]
    const pick = (n: number) => alive[n % alive.length]!
    /** Sends until a replica answers (a killed one refuses connections); the Idempotency-Key makes a resend safe. */
    const send = async (n: number, method: string, path: string, body: unknown) => {
      const idempotencyKey = randomUUID()
      for (let attempt = 0; ; attempt++) {
        try {
          const res = await call(pick(n + attempt), method, path, apiKey, body, { 'idempotency-key': idempotencyKey })
          if (res.status !== 409) return res
        } catch (err) {
          if (attempt > 20) throw err
        }
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    const creates = Array.from({ length: REMINDERS }, (_, i) => async () => {
      const at = new Date(Date.now() + 8000 + (i % 7) * 1000).toISOString()
      const res = await send(i, 'POST', '/v1/reminders', { title: `Reminder ${i}`, trigger: { type: 'scheduled', at } })
      expect(res.status).toBe(201)
      reminderIds.add(res.body!.id as string)
    })
    await inParallel(creates, 24)
    expect(reminderIds.size).toBe(REMINDERS)

    // Steps of three sessions, round-robin over the replicas, six at a time; one replica dies meanwhile.
    const sessions: string[] = []
    for (let s = 0; s < SESSIONS; s++) {
      const res = await send(s, 'POST', '/v1/sessions', { goal: `Ship release ${s} of the billing service`, plan: ['build', 'test', 'deploy'] })
      sessions.push(res.body!.id as string)
    }
    const accepted = new Map<string, Map<number, string>>(sessions.map((id) => [id, new Map()]))
    const steps = Array.from({ length: STEPS }, (_, i) => async () => {
      const session = sessions[i % SESSIONS]!
      const description = `step ${i}: run the ${['build', 'tests', 'deploy'][i % 3]} for the billing release`
      const res = await send(i, 'POST', `/v1/sessions/${session}/steps`, { description, output: 'ok' })
      expect(res.status).toBe(201)
      accepted.get(session)!.set(res.body!.step_number as number, description)
    })
    const victim = replicas[2]!
    const delivered = () => new Set(rx.received.map((m) => (JSON.parse(m.body) as { data: { reminder: { id: string } } }).data.reminder.id))
    const acceptedSoFar = () => [...accepted.values()].reduce((n, m) => n + m.size, 0)
    const killer = (async () => {
      // Mid-run: once steps are flowing, while the last reminders created are not yet due.
      while (acceptedSoFar() < 30) await new Promise((r) => setTimeout(r, 10))
      victim.kill()
      alive = replicas.slice(0, 2)
      return { steps: acceptedSoFar(), reminders: delivered().size }
    })()
    await inParallel(steps, 6)
    const atKill = await killer
    // The kill landed while both kinds of work were under way, not before or after them.
    expect(atKill.steps).toBeLessThan(STEPS)
    expect(atKill.reminders).toBeLessThan(REMINDERS)

    // Every reminder delivered, each under one webhook-id however often it was sent.
    const deadline = Date.now() + 90_000
    while (delivered().size < REMINDERS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    const byReminder = new Map<string, Set<string>>()
    for (const m of rx.received) {
      const headers = { 'webhook-id': String(m.headers['webhook-id']), 'webhook-timestamp': String(m.headers['webhook-timestamp']), 'webhook-signature': String(m.headers['webhook-signature']) }
      const event = signer.verify(m.body, headers) as { type: string; data: { reminder: { id: string } } }
      expect(event.type).toBe('reminder.triggered')
      const ids = byReminder.get(event.data.reminder.id) ?? new Set()
      ids.add(headers['webhook-id'])
      byReminder.set(event.data.reminder.id, ids)
    }
    expect([...byReminder.keys()].sort()).toEqual([...reminderIds].sort())
    const doubled = [...byReminder].filter(([, ids]) => ids.size !== 1)
    expect(doubled).toEqual([])

    // Every accepted step is in its session, numbered 1..N without gaps, as any replica reads it.
    for (const id of sessions) {
      const log: Array<{ step_number: number; description: string }> = []
      let cursor: string | null = null
      do {
        const page = await call(r1, 'GET', `/v1/sessions/${id}/steps?limit=100${cursor ? `&cursor=${cursor}` : ''}`, apiKey)
        log.push(...(page.body!.items as typeof log))
        cursor = page.body!.next_cursor as string | null
      } while (cursor)
      expect(log.map((s) => s.step_number)).toEqual(log.map((_, i) => i + 1))
      for (const [n, description] of accepted.get(id)!) expect(log[n - 1]?.description).toBe(description)
    }
    expect(acceptedSoFar()).toBe(STEPS)
  })
})

async function inParallel(tasks: Array<() => Promise<void>>, width: number): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) await tasks[next++]!()
    }),
  )
}
