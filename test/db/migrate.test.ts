import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CACHE_SIZE_KIB, openDb } from '../../src/db/client.js'
import { MIGRATIONS_FOLDER, migrationsApplied, runMigrations } from '../../src/db/migrate.js'
import { migrationsBefore } from './migrations-before.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('database', () => {
  it('migrates a fresh file with WAL and foreign keys on, and migrating again is a no-op', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-db-'))
    dirs.push(dir)
    const path = join(dir, 'nested', 'gk.db')
    const first = openDb(path)
    expect(migrationsApplied(first)).toBe(false)
    runMigrations(first)
    expect(migrationsApplied(first)).toBe(true)
    expect(first.sqlite.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(first.sqlite.pragma('foreign_keys', { simple: true })).toBe(1)
    expect(first.sqlite.pragma('cache_size', { simple: true })).toBe(-CACHE_SIZE_KIB)
    first.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)").run()
    first.close()

    const again = openDb(path)
    runMigrations(again)
    expect(again.sqlite.prepare('SELECT name FROM agents').all()).toEqual([{ name: 'a' }])
    again.close()
  })

  it('refuses a database migrated by a newer goalkeeper, naming what to do', () => {
    const h = openDb(':memory:')
    runMigrations(h)
    h.sqlite.prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', ?)").run(Date.now() + 86_400_000)
    expect(() => runMigrations(h)).toThrow(/schema is newer than this goalkeeper knows.*run the newer goalkeeper/)
    h.close()
  })

  it('cascades an agent delete to its keys', () => {
    const h = openDb(':memory:')
    runMigrations(h)
    h.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)").run()
    h.sqlite.prepare("INSERT INTO api_keys (id, agent_id, key_hash, created_at) VALUES ('key_1', 'agt_1', 'h', 1)").run()
    h.sqlite.prepare("DELETE FROM agents WHERE id = 'agt_1'").run()
    expect(h.sqlite.prepare('SELECT count(*) AS n FROM api_keys').get()).toEqual({ n: 0 })
    h.close()
  })
})

describe('0009 session journal', () => {
  it('moves each existing session snapshot into session_snapshots at the row version', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-db-'))
    dirs.push(dir)
    // The migrations up to 0008, as a database from before the journal has them.
    const before = join(dir, 'before')
    cpSync(MIGRATIONS_FOLDER, before, { recursive: true })
    rmSync(join(before, '0009_session_journal.sql'))
    const journalFile = join(before, 'meta', '_journal.json')
    const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] }
    journal.entries = journal.entries.filter((e) => e.tag < '0009')
    writeFileSync(journalFile, JSON.stringify(journal))

    const h = openDb(join(dir, 'gk.db'))
    runMigrations(h, before)
    h.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)").run()
    h.sqlite
      .prepare(
        `INSERT INTO sessions (id, agent_id, goal, plan, config, state, snapshot, version, created_at, updated_at)
         VALUES ('ses_1', 'agt_1', 'g', '[]', '{}', '{}', '{"goal":"g"}', 7, 1, 2)`,
      )
      .run()
    runMigrations(h)
    expect(h.sqlite.prepare('SELECT * FROM session_snapshots').all()).toEqual([{ session_id: 'ses_1', version: 7, snapshot: '{"goal":"g"}' }])
    const columns = (h.sqlite.pragma('table_info(sessions)') as { name: string }[]).map((c) => c.name)
    expect(columns).not.toContain('snapshot')
    expect(h.sqlite.prepare('SELECT id, version FROM sessions').all()).toEqual([{ id: 'ses_1', version: 7 }])
    h.close()
  })
})

describe('0013 unread webhook messages', () => {
  it('drops stored events that no delivery refers to, and keeps the others', () => {
    const before = migrationsBefore('0013')
    const h = openDb(':memory:')
    try {
      runMigrations(h, before.folder)
      const q = (sql: string) => h.sqlite.prepare(sql).run()
      q("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)")
      q("INSERT INTO webhooks (id, agent_id, url, secret, created_at, updated_at) VALUES ('whk_1', 'agt_1', 'http://127.0.0.1:9/', 's', 1, 1)")
      for (const id of ['msg_read', 'msg_unread']) {
        q(`INSERT INTO webhook_messages (id, agent_id, event_type, payload, created_at) VALUES ('${id}', 'agt_1', 'session.stalled', '{}', 1)`)
      }
      q(`INSERT INTO webhook_deliveries (id, agent_id, message_id, webhook_id, state, attempts, next_attempt_at, created_at, updated_at)
         VALUES ('dlv_1', 'agt_1', 'msg_read', 'whk_1', 'delivered', 1, NULL, 1, 1)`)
      runMigrations(h)
      expect(h.sqlite.prepare('SELECT id FROM webhook_messages').all()).toEqual([{ id: 'msg_read' }])
    } finally {
      h.close()
      before.dispose()
    }
  })
})

describe('0014 reminder session link', () => {
  it("drops links to unknown or another agent's sessions; deleting a session then unlinks its reminders", () => {
    const before = migrationsBefore('0014')
    const h = openDb(':memory:')
    try {
      runMigrations(h, before.folder)
      const q = (sql: string) => h.sqlite.prepare(sql).run()
      for (const a of ['agt_1', 'agt_2']) q(`INSERT INTO agents (id, name, created_at) VALUES ('${a}', 'a', 1)`)
      for (const [s, a] of [['ses_1', 'agt_1'], ['ses_2', 'agt_2']]) {
        q(`INSERT INTO sessions (id, agent_id, goal, plan, config, state, created_at, updated_at) VALUES ('${s}', '${a}', 'g', '[]', '{}', '{}', 1, 1)`)
      }
      const links: [string, string | null][] = [['rem_own', 'ses_1'], ['rem_foreign', 'ses_2'], ['rem_unknown', 'ses_nope'], ['rem_none', null]]
      links.forEach(([id, session], i) => {
        h.sqlite
          .prepare(`INSERT INTO reminders (id, doc_id, agent_id, session_id, title, trigger_type, trigger_pattern, created_at, updated_at)
            VALUES (?, ?, 'agt_1', ?, 't', 'context', 'p', 1, 1)`)
          .run(id, i + 1, session)
      })
      runMigrations(h)
      const linked = () => h.sqlite.prepare('SELECT id, session_id FROM reminders ORDER BY id').all()
      expect(linked()).toEqual([
        { id: 'rem_foreign', session_id: null }, { id: 'rem_none', session_id: null },
        { id: 'rem_own', session_id: 'ses_1' }, { id: 'rem_unknown', session_id: null },
      ])
      q("DELETE FROM sessions WHERE id = 'ses_1'")
      expect(linked()).toEqual(links.map(([id]) => ({ id, session_id: null })).sort((x, y) => (x.id < y.id ? -1 : 1)))
      // An agent's delete cascades through its sessions (firing the trigger) and its reminders.
      q("DELETE FROM agents WHERE id = 'agt_1'")
      expect(linked()).toEqual([])
    } finally {
      h.close()
      before.dispose()
    }
  })
})
