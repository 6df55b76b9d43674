import { afterEach, describe, expect, it } from 'vitest'
import { openPg, type PgHandle } from '../../src/db/postgres.js'
import { PgDatabase, translate } from '../../src/db/pg-database.js'
import { createPgDatabase, pgUrl } from './database.js'

describe('placeholders written for both dialects', () => {
  it('numbers ? in order and gives each @name one number, leaving quoted text alone', () => {
    expect(translate('SELECT * FROM t WHERE a = ? AND b > ? LIMIT ?')).toEqual({ text: 'SELECT * FROM t WHERE a = $1 AND b > $2 LIMIT $3', names: [] })
    expect(translate('UPDATE t SET v = @v, at = @now WHERE id = @id AND at < @now')).toEqual({
      text: 'UPDATE t SET v = $1, at = $2 WHERE id = $3 AND at < $2',
      names: ['v', 'now', 'id'],
    })
    expect(translate(`SELECT 'what? @home' AS "x?", 'it''s' FROM t WHERE a = ?`).text).toBe(`SELECT 'what? @home' AS "x?", 'it''s' FROM t WHERE a = $1`)
    expect(() => translate('SELECT ? , @a')).toThrow(/Mixed/)
  })
})

const handles: PgHandle[] = []
afterEach(async () => {
  for (const h of handles.splice(0)) await h.close()
})

async function database(url?: string): Promise<{ db: PgDatabase; url: string }> {
  const target = url ?? (await createPgDatabase())
  const handle = openPg(target, { max: 4 })
  handles.push(handle)
  const db = new PgDatabase(handle.pool)
  if (url === undefined) await db.run('CREATE TABLE jobs (id int PRIMARY KEY, owner text, note text)')
  return { db, url: target }
}

// Commit, rollback and savepoints on both dialects: test/db/database-contract.test.ts.
describe.skipIf(pgUrl === null)('PostgreSQL transactions across connections and replicas', () => {
  it('runs concurrent transactions on connections of their own: neither sees the other before it commits', async () => {
    const { db } = await database()
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const first = db.transaction(async () => {
      await db.run('INSERT INTO jobs (id) VALUES (?)', [1])
      await held
      return db.all<{ id: number }>('SELECT id FROM jobs ORDER BY id')
    })
    const seenBySecond = await db.transaction(async () => {
      await db.run('INSERT INTO jobs (id) VALUES (?)', [2])
      return db.all<{ id: number }>('SELECT id FROM jobs ORDER BY id')
    })
    expect(seenBySecond).toEqual([{ id: 2 }])
    release()
    expect(await first).toEqual([{ id: 1 }, { id: 2 }])
  })

  it('lets two replicas claim due rows at once with FOR UPDATE SKIP LOCKED: every row claimed once', async () => {
    const { db: one, url } = await database()
    const { db: two } = await database(url)
    await one.run('INSERT INTO jobs (id) SELECT g FROM generate_series(1, 200) g')
    const claim = (db: PgDatabase, owner: string) =>
      db.transaction(() => db.all<{ id: number }>(`UPDATE jobs SET owner = ? WHERE id IN (SELECT id FROM jobs WHERE owner IS NULL ORDER BY id LIMIT 25 FOR UPDATE SKIP LOCKED) RETURNING id`, [owner]))
    const claimed: number[] = []
    for (;;) {
      const batches = await Promise.all([claim(one, 'one'), claim(two, 'two'), claim(one, 'one'), claim(two, 'two')])
      const ids = batches.flat().map((r) => r.id)
      if (ids.length === 0) break
      claimed.push(...ids)
    }
    expect(claimed.sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1))
    const owners = await one.all<{ owner: string; n: number }>('SELECT owner, count(*)::int AS n FROM jobs GROUP BY owner ORDER BY owner')
    expect(owners.map((o) => o.owner)).toEqual(['one', 'two'])
  })
})
