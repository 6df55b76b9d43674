import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
import { backend } from '../helpers.js'
import { Receiver } from '../webhooks/receiver.js'
import { verify } from '../webhooks/verify.js'

const CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'gk-crash-'))
const DB = join(dir, 'gk.db')
let rx: Receiver

function run(mode: string, iso: string, onSpawn?: (kill: () => void) => void): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: { ...process.env, DB, NOW: String(Date.parse(iso)), RECEIVER: rx.url, MODE: mode },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d))
    child.stderr.on('data', (d: Buffer) => (err += d))
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      if (code !== 0 && signal === null) reject(new Error(`child ${mode} exited ${code}: ${err}`))
      else resolve({ code, signal, out })
    })
    onSpawn?.(() => child.kill('SIGKILL'))
  })
}

function db<T>(sql: string): T[] {
  const h = openDb(DB)
  try {
    return h.sqlite.prepare(sql).all() as T[]
  } finally {
    h.close()
  }
}

beforeAll(async () => {
  rx = await new Receiver().start()
})
afterAll(async () => {
  await rx.stop()
  rmSync(dir, { recursive: true, force: true })
})

// Processes killed on one SQLite file; on PostgreSQL, test/reminders/ticker-replicas.test.ts covers a dead replica's claims.
describe.skipIf(backend === 'postgres')('crash safety (child processes on a real SQLite file)', { timeout: 180_000 }, () => {
  let secret = ''
  let ids: Record<string, string> = {}

  it('kill -9 between claim and delivery: the fire is delivered once after restart', async () => {
    const setup = await run('setup', '2026-11-22T09:00:00.000Z')
    ;({ secret, ids } = JSON.parse(setup.out) as { secret: string; ids: Record<string, string> })
    const died = await run('claim-and-die', '2026-11-22T09:01:00.000Z')
    expect(died.signal).toBe('SIGKILL')
    expect(rx.received).toHaveLength(0)
    expect(db('SELECT reminder_id FROM reminder_fires')).toEqual([{ reminder_id: ids.shot }])
    expect(db('SELECT count(*) AS n FROM webhook_deliveries WHERE claimed_at IS NOT NULL')).toEqual([{ n: 1 }])

    await run('tick', '2026-11-22T09:01:02.000Z')
    await run('tick', '2026-11-22T09:01:03.000Z')
    expect(rx.received).toHaveLength(1)
    expect(verify(secret, rx.received[0]!)).toMatchObject({ type: 'reminder.triggered', data: { reminder: { id: ids.shot }, late: false } })
  })

  it('down past several occurrences, then killed mid-delivery: each due fire per missed_policy, none doubled', async () => {
    rx.received.length = 0
    // Leave every request of this run unanswered and kill the process at the first one. Under
    // load, more of the concurrent deliveries may reach the receiver before the kill lands: each
    // of them was unanswered, so each must be delivered again after the restart.
    let kill: () => void = () => {}
    let dying = true
    rx.responder = (_n, res) => {
      if (dying) {
        kill()
        return
      }
      res.statusCode = 204
      res.end()
    }
    const hung = await run('tick', '2026-11-22T15:30:00.000Z', (k) => (kill = k))
    expect(hung.signal).toBe('SIGKILL')
    dying = false
    const inFlight = rx.received.length
    expect(inFlight).toBeGreaterThanOrEqual(1)
    await run('tick', '2026-11-22T15:30:05.000Z')
    await run('tick', '2026-11-22T15:30:06.000Z')

    const fires = db<{ reminder_id: string; scheduled_for: number; late: number }>('SELECT reminder_id, scheduled_for, late FROM reminder_fires ORDER BY scheduled_for')
    const hours = (id: string) => fires.filter((f) => f.reminder_id === id).map((f) => new Date(f.scheduled_for).toISOString().slice(11, 16))
    expect(hours(ids.once!)).toEqual(['15:00'])
    expect(hours(ids.skip!)).toEqual([])
    expect(hours(ids.all!)).toEqual(['10:00', '11:00', '12:00', '13:00', '14:00', '15:00'])
    expect(fires.filter((f) => f.reminder_id !== ids.shot).every((f) => f.late === 1)).toBe(true)

    // 7 messages, each acknowledged exactly once; only those killed in flight were seen twice.
    const ack = db<{ message_id: string; state: string }>('SELECT message_id, state FROM webhook_deliveries')
    expect(ack).toHaveLength(8) // 7 + the earlier one-shot
    expect(ack.every((d) => d.state === 'succeeded')).toBe(true)
    const seen = rx.received.map((r) => String(r.headers['webhook-id']))
    expect(new Set(seen).size).toBe(7)
    expect(seen).toHaveLength(7 + inFlight)
    for (const r of rx.received) expect(verify(secret, r)).toBeTruthy()
    const acked = db<{ n: number }>('SELECT count(*) AS n FROM webhook_attempts WHERE status_code = 204')[0]!.n
    expect(acked).toBe(8)

    // Restarting again at the same instant fires nothing more.
    await run('tick', '2026-11-22T15:30:07.000Z')
    expect(rx.received).toHaveLength(7 + inFlight)
    expect(db('SELECT count(*) AS n FROM reminder_fires')).toEqual([{ n: 8 }])
  })

  it('kill -9 between claiming due reminders and firing them: fired once when the lease runs out', async () => {
    rx.received.length = 0
    // 16:00: once, skip and all are due again; the process claims them (5 s lease) and dies.
    const died = await run('claim-reminders-and-die', '2026-11-22T16:00:00.000Z')
    expect(died.signal).toBe('SIGKILL')
    expect(db('SELECT count(*) AS n FROM reminders WHERE claimed_until IS NOT NULL')).toEqual([{ n: 3 }])
    // A restart inside the lease leaves them alone; one after it fires each once.
    expect(JSON.parse((await run('tick', '2026-11-22T16:00:04.000Z')).out)).toMatchObject({ fired: 0 })
    expect(JSON.parse((await run('tick', '2026-11-22T16:00:05.000Z')).out)).toMatchObject({ fired: 3 })
    expect(JSON.parse((await run('tick', '2026-11-22T16:00:06.000Z')).out)).toMatchObject({ fired: 0 })
    expect(db(`SELECT count(*) AS n FROM reminder_fires WHERE scheduled_for = ${Date.parse('2026-11-22T16:00:00Z')}`)).toEqual([{ n: 3 }])
    expect(rx.received).toHaveLength(3)
    expect(db('SELECT count(*) AS n FROM reminders WHERE claimed_until IS NOT NULL')).toEqual([{ n: 0 }])
  })
})
