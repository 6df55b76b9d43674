import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * drizzle-kit's journal of a migrations folder. drizzle's migrators record each applied migration
 * with the journal entry's `when` as `created_at`, so comparing the newest applied one with the
 * folder's last entry tells whether the database is behind, current or ahead of this build.
 */
export interface Journal {
  entries: Array<{ tag: string; when: number }>
}

export function readJournal(folder: string): Journal {
  return JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as Journal
}

class SchemaTooNew extends Error {
  override name = 'SchemaTooNew'
}

/**
 * Refuses a database migrated by a newer goalkeeper: running old code on a newer schema could
 * write rows the newer replicas misread. `newestApplied` is the largest `created_at` recorded.
 */
export function assertSchemaKnown(newestApplied: number | undefined, journal: Journal): void {
  const last = journal.entries.at(-1)
  if (newestApplied === undefined || last === undefined || newestApplied <= last.when) return
  throw new SchemaTooNew(
    `the database schema is newer than this goalkeeper knows (a migration of ${new Date(newestApplied).toISOString()}, ` +
      `this build's last is ${last.tag} of ${new Date(last.when).toISOString()}): run the newer goalkeeper version`,
  )
}
