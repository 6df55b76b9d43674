import { bigint, customType } from 'drizzle-orm/pg-core'

/** Epoch milliseconds, as in the SQLite schema: int8, read as a JS number (safe until year 287,396). */
export const ms = (name: string) => bigint(name, { mode: 'number' })

/** PostgreSQL's full-text document type (drizzle-orm has no built-in column for it). */
export const tsvector = customType<{ data: string }>({
  dataType: () => 'tsvector',
})

/**
 * A prefixed, time-ordered id (`ses_…`). Byte order (`COLLATE "C"`) whatever the database's own
 * collation: pages are cut by `id > cursor`, newest-first lists start below the sentinel `ses_~`,
 * and a linguistic collation (en_US) would reorder them, ignoring `_` and `~` and case.
 */
export const id = customType<{ data: string; notNull: true }>({
  dataType: () => 'text COLLATE "C"',
})
