/**
 * One database opened more than once, as two processes (SQLite: two connections on one file) or
 * two replicas (PostgreSQL: two pools on one database) would open it. Closed (and dropped) after the test.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { openDb, type DbHandle } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { openPg } from '../../src/db/postgres.js'
import { backend } from '../helpers.js'
import { createPgDatabase, dropPgDatabase } from '../postgres/database.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

export interface SharedDatabase {
  /** Another handle on the same database; the first one opened is migrated. */
  open(): DbHandle
}

export async function sharedDatabase(): Promise<SharedDatabase> {
  if (backend === 'postgres') {
    const url = await createPgDatabase({ migrated: true })
    cleanups.push(() => dropPgDatabase(url))
    return {
      open() {
        const handle = openPg(url, { max: 4 })
        cleanups.push(() => handle.close().catch(() => undefined))
        return handle
      },
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'gk-shared-'))
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'goalkeeper.db')
  let migrated = false
  return {
    open() {
      const handle = openDb(file)
      if (!migrated) runMigrations(handle)
      migrated = true
      cleanups.push(() => handle.close().catch(() => undefined))
      return handle
    },
  }
}

/** The agent `agt_1` the service tests write as. */
export async function insertAgent(handle: DbHandle, id = 'agt_1'): Promise<void> {
  await handle.db.run('INSERT INTO agents (id, name, created_at) VALUES (?, ?, 1)', [id, 'a'])
}
