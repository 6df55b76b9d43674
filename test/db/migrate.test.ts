import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
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
    first.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)").run()
    first.close()

    const again = openDb(path)
    runMigrations(again)
    expect(again.sqlite.prepare('SELECT name FROM agents').all()).toEqual([{ name: 'a' }])
    again.close()
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
