import { describe, expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { createMetrics } from '../../src/metrics.js'
import { foldLegacyJournals } from '../../src/sessions/legacy-journal.js'
import { SessionsService } from '../../src/sessions/service.js'
import { backend } from '../helpers.js'

const GOAL = 'Build a REST API for user management with authentication'
const PLAN = ['design user schema', 'implement auth endpoints', 'write tests']
const clock = () => Date.UTC(2026, 10, 22, 9)

function open() {
  const handle = openDb(':memory:')
  runMigrations(handle)
  handle.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)").run()
  return { handle, sessions: new SessionsService({ db: handle.db, clock, metrics: createMetrics() }) }
}

// The old journal only ever existed in SQLite files (startup folds it on the raw connection).
describe.skipIf(backend === 'postgres')('legacy SQLite journal', () => {
  it('folds a journal left by an older version (step rows and session_ops past the snapshot) into the snapshot, once', async () => {
    // What the session is after two steps and a pitfall, run live.
    const live = open()
    const { id } = await live.sessions.create('agt_1', { goal: GOAL, plan: PLAN })
    await live.handle.db.committed()
    await live.sessions.step('agt_1', id, { description: 'design the user schema' })
    await live.sessions.step('agt_1', id, { description: 'implement auth endpoints with JWT' })
    await live.sessions.addPitfall('agt_1', id, 'tokens expire silently')

    // The same session as an older version left it: the first snapshot, then a journal.
    const old = open()
    const sq = old.handle.sqlite
    const row = live.handle.sqlite.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as Record<string, unknown>
    const first = live.handle.sqlite.prepare('SELECT * FROM steps WHERE session_id = ? ORDER BY step_number').all(id) as Array<Record<string, unknown>>
    const snapshot1 = await (async () => {
      const fresh = open()
      const s = await fresh.sessions.create('agt_1', { goal: GOAL, plan: PLAN })
      await fresh.handle.db.committed()
      return (fresh.handle.sqlite.prepare('SELECT snapshot FROM session_snapshots WHERE session_id = ?').get(s.id) as { snapshot: string }).snapshot
    })()
    sq.prepare(`INSERT INTO sessions (id, agent_id, goal, plan, status, config, metadata, state, version, created_at, updated_at)
      VALUES (@id, @agent_id, @goal, @plan, @status, @config, @metadata, @state, 4, @created_at, @updated_at)`).run(row)
    sq.prepare('INSERT INTO session_snapshots (session_id, version, snapshot) VALUES (?, 1, ?)').run(id, snapshot1)
    for (const [i, step] of first.entries()) {
      sq.prepare(`INSERT INTO steps (session_id, step_number, agent_id, description, output, verification, drift, recommended_action, created_at, version)
        VALUES (@session_id, @step_number, @agent_id, @description, @output, @verification, @drift, @recommended_action, @created_at, ${i + 2})`).run(step)
    }
    sq.prepare('INSERT INTO session_ops (session_id, version, at, op) VALUES (?, 4, ?, ?)').run(id, clock(), JSON.stringify({ kind: 'pitfall', text: 'tokens expire silently' }))
    sq.pragma('user_version = 0')

    expect(foldLegacyJournals(sq, clock)).toBe(1)
    expect(sq.prepare('SELECT count(*) AS n FROM session_ops').get()).toEqual({ n: 0 })
    expect(sq.prepare('SELECT version FROM session_snapshots WHERE session_id = ?').get(id)).toEqual({ version: 4 })
    expect(await old.sessions.summary('agt_1', id)).toEqual(await live.sessions.summary('agt_1', id))
    // Marked folded: a second start does not look again.
    expect(foldLegacyJournals(sq, clock)).toBe(0)
  })
})
