import { fileURLToPath } from 'node:url'
import { migrate } from 'drizzle-orm/better-sqlite3/migrator'
import type Database from 'better-sqlite3'
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3'
import { assertSchemaKnown, readJournal } from './migration-journal.js'

/** `migrations/` at the package root, from src/db (tsx) and dist/db (built) alike. */
const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../migrations', import.meta.url))

/** What migrating reads of a SQLite handle (client.ts's SqliteHandle). */
export interface MigrationTarget {
  sqlite: Database.Database
  drizzle: BetterSQLite3Database<Record<string, unknown>>
}

/**
 * Applies pending migrations. Foreign keys are switched off on the connection around `migrate()`
 * because `PRAGMA foreign_keys=OFF` inside its transaction is a no-op, and a drizzle-kit table
 * rebuild would otherwise cascade-delete child rows; `foreign_key_check` proves nothing dangles.
 */
export function runMigrations(handle: MigrationTarget, folder: string = MIGRATIONS_FOLDER): void {
  assertSchemaKnown(newestApplied(handle), readJournal(folder))
  handle.sqlite.pragma('foreign_keys = OFF')
  try {
    migrate(handle.drizzle, { migrationsFolder: folder })
    const broken = handle.sqlite.pragma('foreign_key_check') as unknown[]
    if (broken.length > 0) throw new Error(`Migration left ${broken.length} rows with dangling foreign keys.`)
  } finally {
    handle.sqlite.pragma('foreign_keys = ON')
  }
}

/** True when every migration in the folder's journal has been applied (for /readyz). */
export function migrationsApplied(handle: Pick<MigrationTarget, 'sqlite'>, folder: string = MIGRATIONS_FOLDER): boolean {
  try {
    const journal = readJournal(folder)
    const row = handle.sqlite.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }
    return row.n > 0 && row.n >= journal.entries.length
  } catch {
    return false
  }
}

function newestApplied(handle: Pick<MigrationTarget, 'sqlite'>): number | undefined {
  const table = handle.sqlite.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'`).get()
  if (table === undefined) return undefined
  const row = handle.sqlite.prepare('SELECT max(created_at) AS newest FROM __drizzle_migrations').get() as { newest: number | null }
  return row.newest ?? undefined
}
