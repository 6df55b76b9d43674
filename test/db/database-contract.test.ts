import { afterEach, describe, expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
import type { SqlDatabase } from '../../src/db/database.js'
import { PgDatabase } from '../../src/db/pg-database.js'
import { openPg } from '../../src/db/postgres.js'
import { SqliteDatabase } from '../../src/db/sqlite-database.js'
import { createPgDatabase, pgUrl } from '../postgres/database.js'

/** The same statements and transactions on both dialects: what a repository may rely on. */
const closers: Array<() => unknown> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

const dialects: Array<{ name: string; skip: boolean; open: () => Promise<SqlDatabase> }> = [
  {
    name: 'SQLite',
    skip: false,
    open: async () => {
      const handle = openDb(':memory:')
      closers.push(() => handle.close())
      return new SqliteDatabase(handle.sqlite)
    },
  },
  {
    name: 'SQLite with group commit',
    skip: false,
    open: async () => {
      const handle = openDb(':memory:')
      closers.push(() => handle.close())
      return new SqliteDatabase(handle.sqlite, { groupCommit: true })
    },
  },
  {
    name: 'PostgreSQL',
    skip: pgUrl === null,
    open: async () => {
      const handle = openPg(await createPgDatabase(), { max: 4 })
      closers.push(() => handle.close())
      return new PgDatabase(handle.pool)
    },
  },
]

const tick = () => new Promise((resolve) => setImmediate(resolve))

describe.each(dialects)('$name', ({ skip, open }) => {
  const table = async () => {
    const db = await open()
    await db.run('CREATE TABLE jobs (id integer PRIMARY KEY, note text)')
    return db
  }
  const ids = async (db: SqlDatabase) => (await db.all<{ id: number }>('SELECT id FROM jobs ORDER BY id')).map((r) => Number(r.id))

  it.skipIf(skip)('binds ? in order and @name by name', async () => {
    const db = await table()
    await db.run('INSERT INTO jobs (id, note) VALUES (?, ?)', [1, 'one'])
    await db.run('INSERT INTO jobs (id, note) VALUES (@id, @note)', { id: 2, note: 'two' })
    expect(await db.get('SELECT note FROM jobs WHERE id = @id', { id: 2 })).toEqual({ note: 'two' })
    expect(await db.run('UPDATE jobs SET note = ? WHERE id > ?', ['x', 0])).toBe(2)
  })

  it.skipIf(skip)('commits a transaction whole, rolls a failed one back whole, and a failed savepoint alone', async () => {
    const db = await table()
    await db.transaction(async () => {
      await db.run('INSERT INTO jobs (id) VALUES (?)', [1])
      await tick()
      await db.run('INSERT INTO jobs (id) VALUES (?)', [2])
    })
    await expect(
      db.transaction(async () => {
        await db.run('INSERT INTO jobs (id) VALUES (?)', [3])
        await db.run('INSERT INTO jobs (id) VALUES (?)', [1])
      }),
    ).rejects.toThrow(/UNIQUE|duplicate key/)
    await db.transaction(async () => {
      await db.run('INSERT INTO jobs (id) VALUES (?)', [4])
      await expect(db.transaction(() => db.run('INSERT INTO jobs (id) VALUES (?)', [2]))).rejects.toThrow(/UNIQUE|duplicate key/)
      expect(db.inTransaction).toBe(true)
      await db.run('INSERT INTO jobs (id) VALUES (?)', [5])
    })
    expect(await ids(db)).toEqual([1, 2, 4, 5])
    expect(db.inTransaction).toBe(false)
  })

  it.skipIf(skip)('keeps concurrent transactions apart: each commits or rolls back alone, whatever they await', async () => {
    const db = await table()
    // The row the 8th transaction collides with exists before any starts: which of the others runs
    // first on the pool is up to the scheduler, so none of them may be what it collides with.
    await db.run('INSERT INTO jobs (id) VALUES (?)', [1000])
    const work = Array.from({ length: 20 }, (_, i) =>
      db.transaction(async () => {
        await db.run('INSERT INTO jobs (id) VALUES (?)', [i * 2])
        await tick()
        await db.run('INSERT INTO jobs (id) VALUES (?)', [i === 7 ? 1000 : i * 2 + 1]) // the 8th fails: id 1000 exists
      }),
    )
    const settled = await Promise.allSettled(work)
    expect(settled.map((s) => s.status).filter((s) => s === 'rejected')).toHaveLength(1)
    expect(await ids(db)).toEqual([...Array.from({ length: 40 }, (_, i) => i).filter((i) => i !== 14 && i !== 15), 1000])
  })

  it.skipIf(skip)('a write outside any transaction never joins one that is open, even one that rolls back', async () => {
    const db = await table()
    let fail!: () => void
    const failing = new Promise<void>((_, reject) => (fail = () => reject(new Error('rolled back'))))
    failing.catch(() => {}) // awaited inside the transaction, maybe only after it is rejected
    const open = db.transaction(async () => {
      await db.run('INSERT INTO jobs (id) VALUES (?)', [1])
      await failing
    })
    await tick()
    const outside = db.run('INSERT INTO jobs (id) VALUES (?)', [2])
    await tick()
    fail()
    await expect(open).rejects.toThrow('rolled back')
    await outside
    expect(await ids(db)).toEqual([2])
  })
})
