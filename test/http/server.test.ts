import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { buildApp } from '../../src/http/app.js'
import { start } from '../../src/server.js'

const dirs: string[] = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tempDb = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gk-server-'))
  dirs.push(dir)
  return join(dir, 'gk.db')
}

describe('server start', () => {
  it('prints a bootstrap key once on an empty database when no admin token is set, and the key works', async () => {
    const db = tempDb()
    const env = { GOALKEEPER_DB: db, PORT: '0', LOG_LEVEL: 'silent' }
    const out: string[] = []
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk))
      return true
    })
    const first = await start(env)
    const key = /API key \(shown once\): (gk_[A-Za-z0-9_-]+)/.exec(out.join(''))?.[1]
    expect(key).toBeDefined()
    expect(await first.services.agents.authenticate(key!)).toMatch(/^agt_/)
    await first.close()

    out.length = 0
    const second = await start(env)
    expect(out.join('')).not.toContain('gk_')
    expect(await second.services.agents.count()).toBe(1)
    await second.close()
  })

  it('creates no bootstrap agent when an admin token is configured', async () => {
    const app = await start({ GOALKEEPER_DB: tempDb(), PORT: '0', LOG_LEVEL: 'silent', GOALKEEPER_ADMIN_TOKEN: 'admin-token-0123456789' })
    expect(await app.services.agents.count()).toBe(0)
    await app.close()
  })

  it('checkpoints a SQLite file on its worker thread, long before the 1,000 WAL pages of a checkpoint on commit', async () => {
    const file = tempDb()
    const app = await start({ GOALKEEPER_DB: file, PORT: '0', LOG_LEVEL: 'silent', GOALKEEPER_ADMIN_TOKEN: 'admin-token-0123456789' })
    try {
      const { api_key } = await app.services.agents.create('ckpt')
      const headers = { authorization: `Bearer ${api_key}` }
      const created = await app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { goal: 'Write the quarterly report' } })
      const before = statSync(file).size
      // ~20 × 100 KB: ~500 WAL pages, under the 1,000 at which a commit would checkpoint itself.
      for (let i = 0; i < 20; i++) {
        const res = await app.inject({ method: 'POST', url: `/v1/sessions/${created.json().id}/steps`, headers, payload: { description: `draft section ${i}`, output: 'x'.repeat(100_000) } })
        expect(res.statusCode).toBe(201)
      }
      // Only a checkpoint grows the database file; the worker's come every 100 ms.
      await vi.waitFor(() => expect(statSync(file).size).toBeGreaterThan(before + 1_500_000), { timeout: 10_000, interval: 50 })
    } finally {
      await app.close()
    }
  })

  it('exits 0 on SIGTERM', { timeout: 60_000 }, async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url))
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: root,
      env: { ...process.env, GOALKEEPER_DB: tempDb(), PORT: '0', LOG_LEVEL: 'info', GOALKEEPER_ADMIN_TOKEN: 'admin-token-0123456789' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 25_000)
      child.stdout.on('data', (d: Buffer) => {
        output += d.toString()
        if (output.includes('Server listening')) {
          clearTimeout(timer)
          resolve()
        }
      })
      child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    })
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(output).toContain('shutting down')
  })

  it('refuses to start on a bad variable, naming it', async () => {
    await expect(start({ PORT: 'http' })).rejects.toThrow(/PORT/)
  })
})

describe('shutdown order', () => {
  it('closes the database after the other onClose hooks have run', async () => {
    const handle = openDb(tempDb())
    runMigrations(handle)
    const app = await buildApp({ config: loadConfig({}), handle, logger: false, closeHandleOnClose: true })
    let dbOpenDuringHook = false
    // What a scheduler's stop hook does: use the database one last time.
    app.addHook('onClose', async () => {
      dbOpenDuringHook = (await app.services.agents.count()) === 0
    })
    await app.close()
    expect(dbOpenDuringHook).toBe(true)
    expect(handle.sqlite.open).toBe(false)
  })
})
