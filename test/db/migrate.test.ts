import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CACHE_SIZE_KIB, openDb } from '../../src/db/client.js'
import { migrationsApplied, runMigrations } from '../../src/db/migrate.js'

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

describe('triggers', () => {
  it('deleting a session unlinks its reminders; deleting an agent cascades through its sessions and reminders', () => {
    const h = openDb(':memory:')
    runMigrations(h)
    const q = (sql: string) => h.sqlite.prepare(sql).run()
    q("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)")
    for (const s of ['ses_1', 'ses_2']) {
      q(`INSERT INTO sessions (id, agent_id, goal, plan, config, state, created_at, updated_at) VALUES ('${s}', 'agt_1', 'g', '[]', '{}', '{}', 1, 1)`)
    }
    const links: [string, string | null][] = [
      ['rem_1', 'ses_1'],
      ['rem_2', 'ses_2'],
      ['rem_3', null],
    ]
    links.forEach(([id, session], i) => {
      h.sqlite
        .prepare(
          `INSERT INTO reminders (id, doc_id, agent_id, session_id, title, trigger_type, trigger_pattern, created_at, updated_at)
          VALUES (?, ?, 'agt_1', ?, 't', 'context', 'p', 1, 1)`,
        )
        .run(id, i + 1, session)
    })
    const linked = () => h.sqlite.prepare('SELECT id, session_id FROM reminders ORDER BY id').all()
    q("DELETE FROM sessions WHERE id = 'ses_1'")
    expect(linked()).toEqual([
      { id: 'rem_1', session_id: null },
      { id: 'rem_2', session_id: 'ses_2' },
      { id: 'rem_3', session_id: null },
    ])
    q("DELETE FROM agents WHERE id = 'agt_1'")
    expect(linked()).toEqual([])
    h.close()
  })
})
