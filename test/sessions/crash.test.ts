import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { createMetrics } from '../../src/metrics.js'
import { SessionsService } from '../../src/sessions/service.js'
import { backend } from '../helpers.js'
import { CRASH_CLOCK, crashScript } from './crash-script.js'

const CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'gk-session-crash-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function runChild(db: string): Promise<{ signal: string | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, DB: db }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d))
    child.stderr.on('data', (d: Buffer) => (err += d))
    child.on('error', reject)
    child.on('exit', (code, signal) => (code !== 0 && signal === null ? reject(new Error(`child exited ${code}: ${err}`)) : resolve({ signal, out })))
  })
}

// About a SQLite file left by a killed process; PostgreSQL's durability is the server's.
describe.skipIf(backend === 'postgres')('a SQLite process killed mid-session', () => {
  it('a session killed (SIGKILL) with journaled ops past its snapshot continues exactly after reopening', async () => {
    const file = join(dir, 'crash.db')
    const died = await runChild(file)
    expect(died.signal).toBe('SIGKILL')
    const { id } = JSON.parse(died.out) as { id: string }

    const handle = openDb(file)
    runMigrations(handle)
    const resumedSvc = new SessionsService({ db: handle.db, clock: CRASH_CLOCK, metrics: createMetrics() })

    const straightHandle = openDb(':memory:')
    runMigrations(straightHandle)
    straightHandle.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 0)").run()
    const straightSvc = new SessionsService({ db: straightHandle.db, clock: CRASH_CLOCK, metrics: createMetrics() })
    const sid = await crashScript(straightSvc)

    const resumed = await resumedSvc.step('agt_1', id, { description: 'write tests for the auth endpoints' })
    const expected = await straightSvc.step('agt_1', sid, { description: 'write tests for the auth endpoints' })
    expect(resumed).toEqual(expected)
    expect(await resumedSvc.summary('agt_1', id)).toEqual(await straightSvc.summary('agt_1', sid))
    expect(await resumedSvc.reminder('agt_1', id, 60, {})).toEqual(await straightSvc.reminder('agt_1', sid, 60, {}))
    expect((await resumedSvc.steps('agt_1', id, 100)).items.length).toBe(46)
    await handle.close()
    await straightHandle.close()
  })
})
