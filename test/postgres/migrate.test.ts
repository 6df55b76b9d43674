import { afterEach, describe, expect, it } from 'vitest'
import { openPg, type PgHandle } from '../../src/db/postgres.js'
import { PG_MIGRATIONS_FOLDER, pgMigrationsApplied, runPgMigrations } from '../../src/db/pg-migrate.js'
import { readJournal } from '../../src/db/migration-journal.js'
import { createPgDatabase, pgUrl } from './database.js'

const handles: PgHandle[] = []
afterEach(async () => {
  for (const h of handles.splice(0)) await h.close()
})
const open = (url: string): PgHandle => {
  const h = openPg(url, { max: 2 })
  handles.push(h)
  return h
}

describe.skipIf(pgUrl === null)('PostgreSQL migrations', () => {
  it('three replicas starting at once migrate one database once, under the advisory lock', async () => {
    const url = await createPgDatabase()
    const replicas = [open(url), open(url), open(url)]
    expect(await pgMigrationsApplied(replicas[0]!)).toBe(false)
    await Promise.all(replicas.map((h) => runPgMigrations(h)))
    const { rows } = await replicas[1]!.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations')
    expect(rows[0]!.n).toBe(readJournal(PG_MIGRATIONS_FOLDER).entries.length)
    for (const h of replicas) expect(await pgMigrationsApplied(h)).toBe(true)
    // Starting again is a no-op.
    await runPgMigrations(replicas[2]!)
  })

  it('refuses a database migrated by a newer goalkeeper before applying anything', async () => {
    const h = open(await createPgDatabase())
    await runPgMigrations(h)
    await h.pool.query('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', ['future', Date.now() + 86_400_000])
    await expect(runPgMigrations(h)).rejects.toThrow(/schema is newer than this goalkeeper knows/)
  })

  it('reads epoch milliseconds back as numbers and keeps reminders searchable with websearch syntax', async () => {
    const h = open(await createPgDatabase())
    await runPgMigrations(h)
    const now = Date.now()
    await h.pool.query(`INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', $1)`, [now])
    const insert = `INSERT INTO reminders (id, agent_id, title, body, trigger_type, context_tags, trigger_pattern, created_at, updated_at)
      VALUES ($1, 'agt_1', $2, $3, 'context', $4, $5, $6, $6)`
    await h.pool.query(insert, ['rem_1', 'Deploy the release', 'after tests pass on staging', '["deploy"]', 'deploying', now])
    await h.pool.query(insert, ['rem_2', 'Water the plants', 'every morning', '["home"]', null, now])
    const { rows: created } = await h.pool.query<{ created_at: number }>('SELECT created_at FROM agents')
    expect(created[0]!.created_at).toBe(now)
    const search = (q: string) =>
      h.pool.query<{ id: string }>(`SELECT id FROM reminders WHERE search_doc @@ websearch_to_tsquery('english', $1) ORDER BY id`, [q]).then((r) => r.rows.map((row) => row.id))
    expect(await search('deployments')).toEqual(['rem_1'])
    expect(await search('"the plants" OR staging')).toEqual(['rem_1', 'rem_2'])
    expect(await search('release -staging')).toEqual([])
  })

  it('unlinks reminders from a deleted session and cascades an agent delete', async () => {
    const h = open(await createPgDatabase())
    await runPgMigrations(h)
    await h.pool.query(`INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 1)`)
    await h.pool.query(`INSERT INTO sessions (id, agent_id, goal, plan, config, state, created_at, updated_at)
      VALUES ('ses_1', 'agt_1', 'g', '[]', '{}', '{}', 1, 1)`)
    await h.pool.query(`INSERT INTO reminders (id, agent_id, session_id, title, trigger_type, created_at, updated_at)
      VALUES ('rem_1', 'agt_1', 'ses_1', 't', 'context', 1, 1)`)
    await h.pool.query(`DELETE FROM sessions WHERE id = 'ses_1'`)
    expect((await h.pool.query('SELECT session_id FROM reminders')).rows).toEqual([{ session_id: null }])
    await h.pool.query(`DELETE FROM agents WHERE id = 'agt_1'`)
    expect((await h.pool.query('SELECT count(*)::int AS n FROM reminders')).rows).toEqual([{ n: 0 }])
  })
})
