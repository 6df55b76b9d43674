import type Database from 'better-sqlite3'

/**
 * Journal entries of a session past its snapshot: its session_ops rows plus its step rows written
 * after the snapshot (a step's row is its journal entry).
 */
export function journalEntries(sqlite: Database.Database, id: string): number {
  return (
    sqlite
      .prepare(
        `SELECT (SELECT count(*) FROM session_ops WHERE session_id = @id)
              + (SELECT count(*) FROM steps WHERE session_id = @id
                   AND version > (SELECT version FROM session_snapshots WHERE session_id = @id)) AS n`,
      )
      .get({ id }) as { n: number }
  ).n
}
