import pg from 'pg'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it } from 'vitest'
import { createPgDatabase, dropPgDatabase } from '../postgres/database.js'
import { ADMIN_TOKEN, startReplica, type Replica } from '../replicas/replica.js'
import { Receiver } from '../webhooks/receiver.js'
import { call, expectFaultAnswer, sleep, until } from './http.js'
import { StallProxy } from './stall-proxy.js'

/**
 * A slow database: statements that wait on a lock held by another connection, or on a network that
 * stopped delivering, are cut by the statement timeout and answered 503; the ticker and the
 * dispatcher keep their claims honest meanwhile (what a cut statement claimed waits for the
 * database, not for its lease; a stalled replica's claims are retaken after the lease, never done twice).
 */
const STATEMENT_TIMEOUT_MS = 1000
const REQUEST_TIMEOUT_MS = 8000
/** The longest a cut statement may take to be answered on a loaded machine: the cut, a connection's wait, slack. */
const ANSWER_WITHIN_MS = REQUEST_TIMEOUT_MS + 2000

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A migrated database of the test's own, with a connection for the test's statements and `count(q)` reading `n`. */
async function database(): Promise<{ url: string; sql: pg.Client; count: (q: string, params?: unknown[]) => Promise<number> }> {
  const url = await createPgDatabase({ migrated: true })
  const sql = new pg.Client({ connectionString: url })
  await sql.connect()
  cleanups.push(() => dropPgDatabase(url))
  cleanups.push(() => sql.end())
  return { url, sql, count: async (q, params = []) => (await sql.query<{ n: number }>(q, params)).rows[0]!.n }
}

async function replica(url: string, env: Record<string, string> = {}): Promise<Replica> {
  const r = await startReplica(url, { GOALKEEPER_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS), GOALKEEPER_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), ...env }, { fromSource: true })
  cleanups.push(() => r.stop())
  return r
}

async function agentOn(r: Replica): Promise<string> {
  const agent = await call(r.url, 'POST', '/v1/agents', ADMIN_TOKEN, { name: 'slow' })
  expect(agent.status).toBe(201)
  return agent.body!.api_key as string
}

/** A receiver subscribed to the agent's reminders on `r`, with the endpoint's id and its secret's verifier. */
async function subscribed(r: Replica, key: string): Promise<{ rx: Receiver; hookId: string; signer: Webhook }> {
  const rx = await new Receiver().start()
  cleanups.push(() => rx.stop())
  const hook = await call(r.url, 'POST', '/v1/webhooks', key, { url: rx.url, event_types: ['reminder.triggered'] })
  expect(hook.status).toBe(201)
  return { rx, hookId: hook.body!.id as string, signer: new Webhook(hook.body!.secret as string) }
}

/** Reminders due in 1.5 s, created on `r`. */
async function dueSoon(r: Replica, key: string, n: number): Promise<string[]> {
  const at = new Date(Date.now() + 1500).toISOString()
  const ids: string[] = []
  for (let i = 0; i < n; i++) ids.push((await call(r.url, 'POST', '/v1/reminders', key, { title: `Reminder ${i}`, trigger: { type: 'scheduled', at } })).body!.id as string)
  return ids
}

/** The webhook-id and reminder of each delivery received, its signature verified. */
const verified = (rx: Receiver, signer: Webhook) =>
  rx.received.map((m) => {
    const headers = { 'webhook-id': String(m.headers['webhook-id']), 'webhook-timestamp': String(m.headers['webhook-timestamp']), 'webhook-signature': String(m.headers['webhook-signature']) }
    return { id: headers['webhook-id'], reminder: (signer.verify(m.body, headers) as { data: { reminder: { id: string } } }).data.reminder.id }
  })

/**
 * A session on `r`: a 503 (a 1 s statement or connect timeout met on a loaded machine) is retried, as
 * a client would after its Retry-After.
 */
async function sessionOn(r: Replica, key: string, goal: string): Promise<string> {
  let created: Awaited<ReturnType<typeof call>> | undefined
  expect(await until(async () => (created = await call(r.url, 'POST', '/v1/sessions', key, { goal })).status !== 503, 30_000, 500)).toBe(true)
  expect(created!.status, JSON.stringify(created!.body)).toBe(201)
  return created!.body!.id as string
}

const step = (r: Replica, key: string, session: string) => call(r.url, 'POST', `/v1/sessions/${session}/steps`, key, { description: 'run the billing tests', output: 'ok' })

describe('a slow PostgreSQL', () => {
  it('a statement waiting on a row lock held elsewhere is cut by the statement timeout: 503, and served once the lock is gone', { timeout: 120_000 }, async () => {
    const { url, sql } = await database()
    const r = await replica(url)
    const key = await agentOn(r)
    const locked = await sessionOn(r, key, 'Ship the billing release')
    const free = await sessionOn(r, key, 'Write the release notes')
    expect((await step(r, key, locked)).status).toBe(201)

    await sql.query('BEGIN')
    await sql.query('SELECT id FROM sessions WHERE id = $1 FOR UPDATE', [locked])
    const cut = await step(r, key, locked)
    expectFaultAnswer(cut, 503, ['urn:problem:database_timeout'])
    expect(cut.ms).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 50)
    expect(cut.ms).toBeLessThan(ANSWER_WITHIN_MS)
    // Only that row waits: another session's step goes through meanwhile.
    const other = await step(r, key, free)
    expect(other.status, JSON.stringify(other.body)).toBe(201)
    await sql.query('COMMIT')

    const after = await step(r, key, locked)
    expect(after.status).toBe(201)
    // The cut step left nothing behind: the next one is number 2.
    expect(after.body!.step_number).toBe(2)
    console.log(`PostgreSQL row lock held elsewhere: 503 after ${Math.round(cut.ms)} ms (statement timeout ${STATEMENT_TIMEOUT_MS} ms)`)
  })

  it('a network that stops delivering: 503 within the timeout, /readyz 503, served again once it delivers', { timeout: 120_000 }, async () => {
    const { url } = await database()
    const proxy = await new StallProxy({ host: '127.0.0.1', port: Number(new URL(url).port) }).start()
    cleanups.push(() => proxy.stop())
    const r = await replica(proxy.via(url))
    const key = await agentOn(r)
    const session = await sessionOn(r, key, 'Ship the billing release')
    expect((await step(r, key, session)).status).toBe(201)

    proxy.stall()
    const [cut, ready] = await Promise.all([step(r, key, session), fetch(`${r.url}/readyz`)])
    expectFaultAnswer(cut, 503, ['urn:problem:database_timeout', 'urn:problem:database_unavailable'])
    expect(cut.ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect(ready.status).toBe(503)
    // New connections wait too (the pool replaced the ones the client cut): still a 503 in time.
    const again = await step(r, key, session)
    expectFaultAnswer(again, 503, ['urn:problem:database_timeout', 'urn:problem:database_unavailable'])
    expect(again.ms).toBeLessThan(ANSWER_WITHIN_MS)
    proxy.resume()

    expect(await until(async () => (await step(r, key, session)).status === 201, 30_000)).toBe(true)
    expect(r.child.exitCode).toBeNull()
    console.log(`PostgreSQL network stalled: 503 after ${Math.round(cut.ms)} ms, then ${Math.round(again.ms)} ms on a new connection (statement timeout ${STATEMENT_TIMEOUT_MS} ms)`)
  })

  it('claims whose fire or record a cut statement failed wait for the database, not for their lease', { timeout: 120_000 }, async () => {
    const { url, sql, count } = await database()
    // A lease far longer than the test: whatever happens within it happens through the retries.
    const r = await replica(url, { GOALKEEPER_LEASE_MS: '120000', GOALKEEPER_WEBHOOK_TIMEOUT_MS: '2000' })
    const key = await agentOn(r)
    const { rx, hookId, signer } = await subscribed(r, key)

    // Fires: inserting a fire waits on a table lock and is cut; the claims stay this replica's.
    await sql.query('BEGIN')
    await sql.query('LOCK TABLE reminder_fires IN EXCLUSIVE MODE')
    const first = await dueSoon(r, key, 5)
    expect(await until(async () => (await count('SELECT count(*)::int AS n FROM reminders WHERE id = ANY($1) AND claimed_until IS NOT NULL', [first])) === 5, 30_000)).toBe(true)
    await sleep(2 * STATEMENT_TIMEOUT_MS)
    await sql.query('COMMIT')
    expect(await until(async () => (await count('SELECT count(*)::int AS n FROM reminder_fires WHERE reminder_id = ANY($1)', [first])) === 5, 30_000)).toBe(true)

    // Records: the endpoint's row is held, so recording the sent deliveries is cut; they are sent once, recorded later.
    await until(() => rx.received.length === 5, 30_000)
    await sql.query('BEGIN')
    await sql.query('SELECT id FROM webhooks WHERE id = $1 FOR NO KEY UPDATE', [hookId])
    const second = await dueSoon(r, key, 5)
    expect(await until(() => rx.received.length === 10, 30_000)).toBe(true)
    await sleep(2 * STATEMENT_TIMEOUT_MS)
    const pending = `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN reminder_fires f ON f.message_id = d.message_id
      WHERE f.reminder_id = ANY($1) AND d.state = 'pending'`
    expect(await count(pending, [second])).toBe(5)
    await sql.query('COMMIT')
    expect(await until(async () => (await count(pending, [second])) === 0, 30_000)).toBe(true)

    await sleep(1000)
    const received = verified(rx, signer)
    expect(received.map((m) => m.reminder).sort()).toEqual([...first, ...second].sort())
    expect(new Set(received.map((m) => m.id)).size).toBe(10)
    expect(await count("SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'succeeded' AND attempts = 1")).toBe(10)
  })

  it("a stalled replica's claims are retaken by another after the lease, and not done again when it wakes", { timeout: 180_000 }, async () => {
    const { url, sql, count } = await database()
    // The stalled replica's statement timeout is long, so its blocked fire is still waiting when it is frozen.
    const a = await replica(url, { GOALKEEPER_LEASE_MS: '3000', GOALKEEPER_STATEMENT_TIMEOUT_MS: '10000' })
    const key = await agentOn(a)
    const { rx, signer } = await subscribed(a, key)

    // Replica A claims five due reminders, and its fire waits on a table lock.
    await sql.query('BEGIN')
    await sql.query('LOCK TABLE reminder_fires IN EXCLUSIVE MODE')
    const ids = await dueSoon(a, key, 5)
    expect(await until(async () => (await count('SELECT count(*)::int AS n FROM reminders WHERE claimed_until IS NOT NULL')) === 5, 30_000)).toBe(true)
    // Then it stalls (a frozen process: a long pause, a VM stopped) in the middle of that transaction.
    a.child.kill('SIGSTOP')
    cleanups.push(() => void a.child.kill('SIGCONT'))
    await sql.query('COMMIT')

    // Replica B takes them over once A's lease has run out; the row A's open transaction holds once
    // the server has ended that session (idle in a transaction past the statement timeout).
    const b = await replica(url, { GOALKEEPER_LEASE_MS: '3000' })
    expect(await until(async () => (await count('SELECT count(*)::int AS n FROM reminder_fires')) === 5, 60_000, 250)).toBe(true)
    expect(await until(() => rx.received.length === 5, 30_000)).toBe(true)
    const firedWhileStalled = await count('SELECT count(*)::int AS n FROM reminder_fires')

    // A wakes: its claims are no longer its own, so it fires and sends nothing again, and it serves.
    a.child.kill('SIGCONT')
    const session = await sessionOn(a, key, 'Ship the billing release')
    expect(await until(async () => (await step(a, key, session)).status === 201, 30_000)).toBe(true)
    await sleep(3000)
    expect(firedWhileStalled).toBe(5)
    expect(await count('SELECT count(*)::int AS n FROM reminder_fires')).toBe(5)
    const received = verified(rx, signer)
    expect(received.map((m) => m.reminder).sort()).toEqual([...ids].sort())
    expect(new Set(received.map((m) => m.id)).size).toBe(5)
    expect(await count("SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'succeeded' AND attempts = 1")).toBe(5)
    for (const r of [a, b]) expect(r.child.exitCode).toBeNull()
  })
})
