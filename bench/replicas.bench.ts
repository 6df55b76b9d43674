/**
 * Several replicas on one PostgreSQL database (`npm run bench:replicas`): a throwaway cluster with
 * durable commits, real `node dist/server.js` processes, a receiver on 127.0.0.1.
 *
 * 1. Cold start: the first replica migrates the empty database; the time from spawn to a 200 on
 *    /readyz of each further replica on the migrated database (target ≤ 2 s).
 * 2. Steps (POST /v1/sessions/{id}/steps, 50 sessions): 50 connections on one replica, then 50
 *    spread over three (autocannon per replica, requests summed). This machine's cores bound both.
 * 3. 10,000 reminders due in the same second (created beforehand through the three replicas): the
 *    time from that second until every one was delivered and its signature checked with the
 *    `standardwebhooks` library (target ≤ 20 s), and how many reminders arrived under two different
 *    webhook-ids (target 0; a redelivery under the same id is allowed).
 *
 * Flags: --duration S (steps, default 10), --reminders N (10000), --no-build.
 */
import { loadavg } from 'node:os'
import { Webhook } from 'standardwebhooks'
import { createDatabaseIn, startDurableCluster } from '../test/postgres/cluster.js'
import { Receiver } from '../test/webhooks/receiver.js'
import { buildDist, startGoalkeeper, type ChildServer } from './child-server.js'
import { createFixture, flag, hasFlag, runLoad, stepTextSource, type LoadResult, type Scenario } from './load.js'

const duration = flag('duration', 10)
const reminderCount = flag('reminders', 10_000)

async function main(): Promise<void> {
  if (!hasFlag('no-build')) buildDist()
  console.log(
    `replicas bench; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  const cluster = await startDurableCluster()
  const replicas: ChildServer[] = []
  const receiver = await new Receiver().start()
  try {
    const databaseUrl = await createDatabaseIn(cluster.url, 'goalkeeper')
    const env = { GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' }
    replicas.push(await startGoalkeeper({ databaseUrl, env }))
    const coldStarts: number[] = []
    for (let i = 0; i < 2; i++) {
      const t0 = Date.now()
      replicas.push(await startGoalkeeper({ databaseUrl, env }))
      coldStarts.push(Date.now() - t0)
    }
    console.log(`cold start on a migrated database (spawn → /readyz 200): ${coldStarts.map((ms) => `${ms} ms`).join(', ')}`)

    const fixture = await createFixture(replicas[0]!, 50)
    const auth = { authorization: `Bearer ${fixture.apiKey}` }
    const text = stepTextSource(1)
    let n = 0
    const steps: Scenario = {
      name: 'POST /v1/sessions/{id}/steps',
      method: 'POST',
      headers: auth,
      next: () => ({ path: `/v1/sessions/${fixture.sessionIds[n % fixture.sessionIds.length]}/steps`, body: { description: text(), output: `ok ${n++}` } }),
    }
    await runLoad(replicas[0]!.baseUrl, steps, { connections: 50, duration: 2 })
    const one = await runLoad(replicas[0]!.baseUrl, steps, { connections: 50, duration })
    const three = await Promise.all(replicas.map((r, i) => runLoad(r.baseUrl, steps, { connections: i === 0 ? 18 : 16, duration })))
    const total = (rs: LoadResult[]) => rs.reduce((sum, r) => sum + r.rps, 0)
    console.log(`steps, 1 replica:  ${one.rps.toFixed(0)} req/s, p99 ${one.p99} ms, non-2xx ${one.non2xx}`)
    console.log(`steps, 3 replicas: ${total(three).toFixed(0)} req/s, p99 ${Math.max(...three.map((r) => r.p99))} ms, non-2xx ${three.reduce((s, r) => s + r.non2xx, 0)}`)

    await reminderBurst(replicas, fixture.apiKey, receiver)
  } finally {
    await Promise.all(replicas.map((r) => r.stop()))
    await receiver.stop()
    cluster.stop()
  }
}

async function reminderBurst(replicas: ChildServer[], apiKey: string, receiver: Receiver): Promise<void> {
  const call = async (server: ChildServer, path: string, body: unknown, method = 'POST') => {
    const res = await fetch(server.baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const json = (await res.json()) as Record<string, unknown>
    if (res.status !== (method === 'POST' ? 201 : 200)) throw new Error(`${method} ${path} → ${res.status}: ${JSON.stringify(json)}`)
    return json
  }
  const hook = await call(replicas[0]!, '/v1/webhooks', { url: receiver.url, event_types: ['reminder.triggered'] })
  await call(replicas[0]!, '/v1/settings', { max_reminders: 2 * reminderCount }, 'PUT')
  // Due at the start of one second far enough ahead for the creates to finish first (one agent's
  // creates take its row lock for the max_reminders check: about 100 a second here).
  const dueAt = Math.ceil((Date.now() + 20_000 + reminderCount * 12) / 1000) * 1000
  const created = Date.now()
  let next = 0
  await Promise.all(
    Array.from({ length: 48 }, async (_, w) => {
      for (let i = next++; i < reminderCount; i = next++) {
        await call(replicas[(i + w) % replicas.length]!, '/v1/reminders', { title: `burst ${i}`, trigger: { type: 'scheduled', at: new Date(dueAt).toISOString() } })
      }
    }),
  )
  console.log(`created ${reminderCount} reminders in ${((Date.now() - created) / 1000).toFixed(1)} s; due at ${new Date(dueAt).toISOString()}`)
  if (Date.now() >= dueAt) console.log('WARNING: the creates ran past the due second; the figure below is not valid')
  const deadline = dueAt + 120_000
  // Reminder id → when its first delivery arrived.
  const firstSeen = new Map<string, number>()
  let scanned = 0
  const arrivals = () => {
    for (; scanned < receiver.received.length; scanned++) {
      const m = receiver.received[scanned]!
      const id = (JSON.parse(m.body) as { data: { reminder: { id: string } } }).data.reminder.id
      if (!firstSeen.has(id)) firstSeen.set(id, m.at)
    }
    return firstSeen.size
  }
  while (arrivals() < reminderCount && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  const last = Math.max(...firstSeen.values())
  const signer = new Webhook(hook.secret as string)
  let badSignatures = 0
  const idsByReminder = new Map<string, Set<string>>()
  for (const m of receiver.received) {
    const headers = { 'webhook-id': String(m.headers['webhook-id']), 'webhook-timestamp': String(m.headers['webhook-timestamp']), 'webhook-signature': String(m.headers['webhook-signature']) }
    try {
      const event = signer.verify(m.body, headers) as { data: { reminder: { id: string } } }
      const ids = idsByReminder.get(event.data.reminder.id) ?? new Set<string>()
      ids.add(headers['webhook-id'])
      idsByReminder.set(event.data.reminder.id, ids)
    } catch {
      badSignatures++
    }
  }
  const doubled = [...idsByReminder.values()].filter((ids) => ids.size > 1).length
  console.log(
    `10k burst: ${firstSeen.size}/${reminderCount} delivered, the last ${((last - dueAt) / 1000).toFixed(1)} s after the due second; ` +
      `${receiver.received.length} requests received, ${doubled} reminders under two webhook-ids, ${badSignatures} bad signatures`,
  )
}

await main()
