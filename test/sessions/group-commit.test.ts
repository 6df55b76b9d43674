import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
import { groupCommitOf } from '../../src/db/group-commit.js'
import { runMigrations } from '../../src/db/migrate.js'
import { createMetrics } from '../../src/metrics.js'
import { SessionsService } from '../../src/sessions/service.js'

const dir = mkdtempSync(join(tmpdir(), 'gk-group-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const clock = () => Date.UTC(2026, 10, 22, 9)
const GOAL = 'Build a REST API for user management with authentication'

function open(file: string) {
  const handle = openDb(file)
  runMigrations(handle)
  handle.sqlite.prepare("INSERT OR IGNORE INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)").run()
  return { handle, svc: new SessionsService({ handle, clock, metrics: createMetrics() }) }
}

it('writes of one event-loop turn commit once; each resolves only after the commit, a failing one alone rolls back', async () => {
  const file = join(dir, 'group.db')
  const { handle, svc } = open(file)
  const reader = openDb(file)
  const ids = [0, 1, 2, 3].map(() => svc.create('agt_1', { goal: GOAL }).id)
  const archived = svc.create('agt_1', { goal: GOAL }).id
  svc.update('agt_1', archived, { status: 'archived' })
  const group = groupCommitOf(handle.sqlite)
  const before = { ...group.stats }
  const visible = () => (reader.sqlite.prepare('SELECT count(*) AS n FROM steps').get() as { n: number }).n

  const writes = [
    ...ids.map((id) => svc.step('agt_1', id, { description: 'design the user schema' })),
    svc.step('agt_1', archived, { description: 'design the user schema' }),
    ...ids.map((id) => svc.driftCheck('agt_1', id, 'browse reddit')),
    ...ids.map((id) => svc.reminder('agt_1', id, 2, {})),
  ]
  // Nothing is committed (or visible to another connection) before the turn ends.
  expect(group.open).toBe(true)
  expect(visible()).toBe(0)
  const settled = await Promise.allSettled(writes.map((w) => w.then((v) => ({ v, seen: visible() }))))
  expect(group.stats.batches - before.batches).toBe(1)
  expect(group.stats.runs - before.runs).toBe(12)
  expect(settled.filter((s) => s.status === 'rejected').map((s) => (s as PromiseRejectedResult).reason.status)).toEqual([409])
  // Every write that resolved was already visible from another connection when it did.
  for (const s of settled) if (s.status === 'fulfilled') expect(s.value.seen).toBe(4)
  for (const id of ids) {
    expect(svc.summary('agt_1', id).verifications).toBe(1)
    expect(svc.summary('agt_1', id).reminders.total_reminders).toBe(1)
  }
  reader.close()
  handle.close()
})

it('a batch that fails to commit rejects every write in it and leaves no stale cached session', async () => {
  const { handle, svc } = open(join(dir, 'fail.db'))
  const id = svc.create('agt_1', { goal: GOAL }).id
  await svc.step('agt_1', id, { description: 'design the user schema' })
  const group = groupCommitOf(handle.sqlite)
  const write = svc.step('agt_1', id, { description: 'implement auth endpoints' })
  // Roll the batch back under it, as a failed COMMIT would.
  handle.sqlite.exec('ROLLBACK')
  await expect(write).rejects.toThrow()
  expect(group.open).toBe(false)
  expect(svc.summary('agt_1', id).verifications).toBe(1)
  const next = await svc.step('agt_1', id, { description: 'implement auth endpoints' })
  expect(next.step_number).toBe(2)
  handle.close()
})
