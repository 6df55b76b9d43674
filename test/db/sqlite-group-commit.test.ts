import { afterEach, expect, it, vi } from 'vitest'
import { openDb, type DbHandle } from '../../src/db/client.js'
import { SqliteDatabase } from '../../src/db/sqlite-database.js'

const handles: DbHandle[] = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const h of handles.splice(0)) h.close()
})

function setup() {
  const handle = openDb(':memory:')
  handles.push(handle)
  handle.sqlite.exec('CREATE TABLE jobs (id integer PRIMARY KEY)')
  const db = new SqliteDatabase(handle.sqlite, { groupCommit: true })
  const exec = handle.sqlite.exec.bind(handle.sqlite)
  const statements: string[] = []
  let failCommit = false
  vi.spyOn(handle.sqlite, 'exec').mockImplementation((sql: string) => {
    statements.push(sql)
    if (sql === 'COMMIT' && failCommit) throw new Error('disk I/O error')
    return exec(sql)
  })
  const ids = () => (handle.sqlite.prepare('SELECT id FROM jobs ORDER BY id').all() as { id: number }[]).map((r) => r.id)
  const insert = (...values: number[]) =>
    db.transaction(async () => {
      for (const v of values) await db.run('INSERT INTO jobs (id) VALUES (?)', [v])
    })
  return { db, handle, statements, ids, insert, failNextCommit: () => (failCommit = true) }
}

it("commits one turn's transactions once, each in its own savepoint, and tells the waiters after the COMMIT", async () => {
  const { db, handle, statements, ids, insert } = setup()
  const done = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => insert(i * 2, i === 7 ? 0 : i * 2 + 1)))
  expect(done.filter((d) => d.status === 'rejected')).toHaveLength(1) // the 8th: id 0 exists
  expect(handle.sqlite.inTransaction).toBe(true) // released savepoints, batch still open
  await db.committed()
  expect(handle.sqlite.inTransaction).toBe(false)
  expect(statements.filter((s) => s === 'COMMIT')).toHaveLength(1)
  expect(statements.filter((s) => s === 'BEGIN IMMEDIATE')).toHaveLength(1)
  expect(ids()).toEqual(Array.from({ length: 40 }, (_, i) => i).filter((i) => i !== 14 && i !== 15))
})

it('starts a new batch for the next turn', async () => {
  const { db, statements, insert } = setup()
  await insert(1)
  await db.committed()
  await insert(2)
  await db.committed()
  expect(statements.filter((s) => s === 'COMMIT')).toHaveLength(2)
})

it('a failed COMMIT loses the whole batch: its waiters are told and its rollback hooks run', async () => {
  const { db, ids, insert, failNextCommit } = setup()
  await insert(1)
  await insert(2)
  const undo = vi.fn()
  db.onRollback(undo)
  failNextCommit()
  await expect(db.committed()).rejects.toThrow('disk I/O error')
  expect(undo).toHaveBeenCalledOnce()
  expect(ids()).toEqual([])
})
