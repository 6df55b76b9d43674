import { spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DRIVER } from '../../src/db/sqlite-driver.js'
import { ADMIN_TOKEN, startServer, type Replica } from '../replicas/replica.js'
import { call, expectFaultAnswer } from './http.js'

/**
 * SQLite on a filesystem that fills up: a 4 MiB tmpfs, mounted in a mount namespace of the server
 * process's own (`unshare`), so nothing is left mounted whatever happens to the test; the test
 * reaches the files through /proc/<pid>/root. As root a plain mount namespace; otherwise a user
 * namespace, where the kernel allows one.
 */
const SIZE = '4m'
const asRoot = process.getuid?.() === 0
const unshare = ['unshare', ...(asRoot ? [] : ['--user', '--map-root-user']), '--mount', '--propagation', 'private']
/** PRAGMA integrity_check by a process in the server's mount namespace (SQLite resolves /proc/<pid>/root to the test's own root). */
const INTEGRITY = `const D = require(process.argv[2]); const db = new D(process.argv[1], { fileMustExist: true });
  console.log(db.pragma('integrity_check', { simple: true })); db.close()`
const mountThenRun = ['sh', '-c', `mount -t tmpfs -o size=${SIZE} tmpfs "$0" && exec "$@"`]

function namespacesWork(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'goalkeeper-full-'))
  try {
    const res = spawnSync(unshare[0]!, [...unshare.slice(1), 'sh', '-c', `mount -t tmpfs -o size=${SIZE} tmpfs "$0"`, dir], { encoding: 'utf8' })
    return res.status === 0 ? undefined : (res.stderr || res.error?.message || `exit ${res.status}`).trim()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const unavailable = namespacesWork()
if (unavailable !== undefined) {
  const how = `SQLite full-disk test: needs a tmpfs in a mount namespace (run as root, or allow unprivileged user namespaces): ${unavailable}`
  // Under CI a missing capability is a failure, never a silent skip.
  if (process.env.CI === 'true') throw new Error(how)
  console.warn(`${how}; skipped`)
}

describe.skipIf(unavailable !== undefined)('SQLite on a disk that fills up', () => {
  let dir = ''
  let server: Replica
  /** A file on the tmpfs as the test process reaches it, through the server's mount namespace. */
  const seen = (name: string) => `/proc/${server.child.pid}/root${dir}/${name}`
  const integrity = () => {
    const enter = ['--target', String(server.child.pid), ...(asRoot ? [] : ['--user', '--preserve-credentials']), '--mount']
    const res = spawnSync('nsenter', [...enter, '--', process.execPath, '-e', INTEGRITY, `${dir}/goalkeeper.db`, DRIVER], { encoding: 'utf8' })
    return res.stdout.trim() || res.stderr
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'goalkeeper-full-'))
    server = await startServer({ GOALKEEPER_DB: `${dir}/goalkeeper.db`, LOG_LEVEL: 'error' }, { fromSource: true, wrapper: [...unshare, ...mountThenRun, dir] })
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a write answers 507 naming the cause, reads still work, nothing committed is damaged, writes resume once space is freed', { timeout: 120_000 }, async () => {
    const agent = await call(server.url, 'POST', '/v1/agents', ADMIN_TOKEN, { name: 'full' })
    const key = agent.body!.api_key as string
    const session = (await call(server.url, 'POST', '/v1/sessions', key, { goal: 'Ship the billing release' })).body!.id as string
    const acked: string[] = []
    const step = (description: string) => call(server.url, 'POST', `/v1/sessions/${session}/steps`, key, { description, output: 'x'.repeat(8000) })
    for (let i = 0; i < 5; i++) {
      const a = await step(`before the disk filled: step ${i}`)
      expect(a.status).toBe(201)
      acked.push(`before the disk filled: step ${i}`)
    }

    // Fill the filesystem to its last block.
    const filler = openSync(seen('filler'), 'w')
    const chunk = Buffer.alloc(64 * 1024, 1)
    let filled = false
    try {
      for (;;) writeSync(filler, chunk)
    } catch (err) {
      filled = (err as NodeJS.ErrnoException).code === 'ENOSPC'
    } finally {
      closeSync(filler)
    }
    expect(filled).toBe(true)

    // Writes fail once the WAL needs a block it cannot have (it may have room for a few first).
    const refused = []
    for (let i = 0; i < 100 && refused.length < 3; i++) {
      const description = `while the disk is full: step ${i}`
      const a = await step(description)
      if (a.status === 201) acked.push(description)
      else refused.push(a)
    }
    expect(refused.length).toBe(3)
    for (const a of refused) expectFaultAnswer(a, 507, ['urn:problem:insufficient_storage'])
    expect(refused[0]!.body!.detail).toMatch(/disk is full/)
    const reminder = await call(server.url, 'POST', '/v1/reminders', key, { title: 'Check the disk', trigger: { type: 'scheduled', at: new Date(Date.now() + 3_600_000).toISOString() } })
    expectFaultAnswer(reminder, 507, ['urn:problem:insufficient_storage'])

    // Reads work, and everything acknowledged is there, undamaged.
    const steps = await call(server.url, 'GET', `/v1/sessions/${session}/steps?limit=200`, key)
    expect(steps.status).toBe(200)
    expect((steps.body!.items as Array<{ description: string }>).map((s) => s.description)).toEqual(acked)
    expect((await call(server.url, 'GET', `/v1/sessions/${session}`, key)).status).toBe(200)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    expect(integrity()).toBe('ok')

    // Space freed: writes succeed again, without a restart.
    rmSync(seen('filler'))
    const after = await step('after space was freed')
    expect(after.status).toBe(201)
    expect(after.body!.step_number).toBe(acked.length + 1)
    expect((await call(server.url, 'POST', '/v1/reminders', key, { title: 'Check the disk', trigger: { type: 'scheduled', at: new Date(Date.now() + 3_600_000).toISOString() } })).status).toBe(201)
    expect(integrity()).toBe('ok')
    expect(server.child.exitCode).toBeNull()
    // Nothing failed for good on the way: the WAL checkpoint worker waited the full disk out.
    expect(server.stdout.join('')).toBe('')
    console.log(`SQLite on a full ${SIZE} tmpfs: ${acked.length} steps acknowledged (${acked.length - 5} after it filled), then 507s; writes back after freeing space`)
  })
})
