import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { openDb, type DbHandle } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { openPg } from '../../src/db/postgres.js'
import { backend, subscribeToEvents } from '../helpers.js'
import { createPgDatabase, dropPgDatabase } from '../postgres/database.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/**
 * Two handles on one fresh database, as two server processes (replicas) would hold: two SQLite
 * connections to one file, or two PostgreSQL pools on one database. Agent `agt_a` subscribed.
 */
export async function twoHandles(): Promise<[DbHandle, DbHandle]> {
  let first: DbHandle
  let second: DbHandle
  if (backend === 'postgres') {
    const url = await createPgDatabase({ migrated: true })
    cleanups.push(() => dropPgDatabase(url))
    first = openPg(url, { max: 4 })
    second = openPg(url, { max: 4 })
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'gk-guarantees-'))
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    const path = join(dir, 'gk.db')
    const migrated = openDb(path)
    runMigrations(migrated)
    first = migrated
    second = openDb(path)
  }
  cleanups.push(
    () => first.close(),
    () => second.close(),
  )
  await first.db.run("INSERT INTO agents (id, name, created_at) VALUES ('agt_a', 'a', 0)")
  await subscribeToEvents(first.db, 'agt_a')
  await first.db.committed()
  return [first, second]
}

export async function announced(h: DbHandle): Promise<{ id: string; scheduled_for: string }[]> {
  const rows = await h.db.all<{ payload: string }>("SELECT payload FROM webhook_messages WHERE event_type = 'reminder.triggered' ORDER BY id")
  return rows.map((r) => JSON.parse(r.payload) as { data: { reminder: { id: string }; scheduled_for: string } }).map((m) => ({ id: m.data.reminder.id, scheduled_for: m.data.scheduled_for }))
}
