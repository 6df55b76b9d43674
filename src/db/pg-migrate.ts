import { fileURLToPath } from 'node:url'
import { drizzle } from 'drizzle-orm/node-postgres'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import pg from 'pg'
import { assertSchemaKnown, readJournal } from './migration-journal.js'
import type { PgHandle } from './postgres.js'

/** `migrations/pg/` at the package root, from src/db (tsx) and dist/db (built) alike. */
export const PG_MIGRATIONS_FOLDER = fileURLToPath(new URL('../../migrations/pg', import.meta.url))

// Any constant shared by every goalkeeper: replicas starting together queue on it.
const MIGRATION_LOCK = 0x676b6d69 // "gkmi"

async function newestApplied(client: pg.ClientBase): Promise<number | undefined> {
  const { rows } = await client.query<{ exists: boolean }>(`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS exists`)
  if (!rows[0]?.exists) return undefined
  const res = await client.query<{ newest: string | null }>('SELECT max(created_at)::text AS newest FROM drizzle.__drizzle_migrations')
  return res.rows[0]?.newest == null ? undefined : Number(res.rows[0].newest)
}

/**
 * Applies pending migrations under a session advisory lock, so any number of replicas may start at
 * once: the first migrates, the others wait, then find nothing to do. A database migrated by a
 * newer goalkeeper is refused before anything is applied. On a connection of its own, outside the
 * pool: neither the wait for the lock nor a long migration is cut by the pool's statement timeout.
 */
export async function runPgMigrations(handle: PgHandle, folder: string = PG_MIGRATIONS_FOLDER): Promise<void> {
  const journal = readJournal(folder)
  const client = new pg.Client({ connectionString: handle.url })
  // A connection lost meanwhile fails the statement under way; unheard, its 'error' event would end the process.
  client.on('error', () => {})
  await client.connect()
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
    try {
      assertSchemaKnown(await newestApplied(client), journal)
      await migrate(drizzle({ client }), { migrationsFolder: folder })
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK])
    }
  } finally {
    await client.end()
  }
}

/** True when every migration of the folder has been applied (for /readyz). */
export async function pgMigrationsApplied(handle: PgHandle, folder: string = PG_MIGRATIONS_FOLDER): Promise<boolean> {
  try {
    const { rows } = await handle.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations')
    return (rows[0]?.n ?? 0) >= readJournal(folder).entries.length
  } catch {
    return false
  }
}
