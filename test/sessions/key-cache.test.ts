import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, expect, it, vi } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openDb, type DbHandle } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { createMetrics } from '../../src/metrics.js'
import { createServices } from '../../src/services.js'

const dir = mkdtempSync(join(tmpdir(), 'gk-keys-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const handles: DbHandle[] = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const h of handles.splice(0)) h.close()
})

const GOAL = 'Build a REST API for user management with authentication'
let n = 0
const nextTurn = () => new Promise((r) => setImmediate(r))

function open() {
  const file = join(dir, `keys-${n++}.db`)
  const handle = openDb(file)
  runMigrations(handle)
  handles.push(handle)
  const services = createServices({ config: loadConfig({}), handle, clock: () => Date.UTC(2026, 10, 22, 9), metrics: createMetrics() })
  const agent = services.agents.create('a').id
  const id = services.sessions.create(agent, { goal: GOAL, plan: ['design the user schema', 'implement auth endpoints'] }).id
  /** Another connection to the same file, as another process would hold. */
  const other = () => {
    const h = openDb(file)
    handles.push(h)
    return h.sqlite
  }
  return { services, sessions: services.sessions, agent, id, other, keyReads: vi.spyOn(services.sessions.engines.store.q.key, 'get') }
}

it('serves steps, drift checks and reminders of a cached session without reading its row again', async () => {
  const { sessions, agent, id, keyReads } = open()
  await sessions.step(agent, id, { description: 'design the user schema' })
  keyReads.mockClear()
  for (let i = 0; i < 3; i++) {
    await sessions.step(agent, id, { description: `implement auth endpoints, part ${i}` })
    await sessions.driftCheck(agent, id, 'add a password reset flow')
    await sessions.reminder(agent, id, i + 2, {})
    await nextTurn()
  }
  expect(keyReads).not.toHaveBeenCalled()
  expect(sessions.summary(agent, id).verifications).toBe(4)
})

it('another agent never gets the cached session: 404', async () => {
  const { services, sessions, agent, id } = open()
  await sessions.step(agent, id, { description: 'design the user schema' })
  const stranger = services.agents.create('b').id
  await expect(sessions.reminder(stranger, id, 2, {})).rejects.toMatchObject({ status: 404 })
  await expect(sessions.step(stranger, id, { description: 'design the user schema' })).rejects.toMatchObject({ status: 404 })
  expect(agent).not.toBe(stranger)
})

it("sees another connection's archive at the next turn", async () => {
  const { sessions, agent, id, other } = open()
  await sessions.reminder(agent, id, 2, {})
  other().prepare("UPDATE sessions SET status = 'archived', version = version + 1 WHERE id = ?").run(id)
  await nextTurn()
  await expect(sessions.reminder(agent, id, 3, {})).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/archived/) })
})

it("writes on top of another connection's write instead of failing on a stale version", async () => {
  const { sessions, agent, id, other } = open()
  await sessions.step(agent, id, { description: 'design the user schema' })
  other().prepare('UPDATE sessions SET version = version + 1 WHERE id = ?').run(id)
  await nextTurn()
  await expect(sessions.step(agent, id, { description: 'implement auth endpoints' })).resolves.toMatchObject({ step_number: 2 })
})

it('archiving and unarchiving in this process keep the cached key right, with no conflict after', async () => {
  const { sessions, agent, id } = open()
  await sessions.step(agent, id, { description: 'design the user schema' })
  sessions.update(agent, id, { status: 'archived' })
  await expect(sessions.reminder(agent, id, 2, {})).rejects.toMatchObject({ status: 409 })
  sessions.update(agent, id, { status: 'active', metadata: { k: 1 } })
  await expect(sessions.step(agent, id, { description: 'implement auth endpoints' })).resolves.toMatchObject({ step_number: 2 })
})

it("deleting an agent drops its cached sessions: they are 404 at once", async () => {
  const { services, sessions, agent, id } = open()
  await sessions.step(agent, id, { description: 'design the user schema' })
  services.agents.delete(agent)
  await expect(sessions.reminder(agent, id, 2, {})).rejects.toMatchObject({ status: 404 })
})
