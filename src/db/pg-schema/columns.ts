import { bigint, customType } from 'drizzle-orm/pg-core'

/** Epoch milliseconds, as in the SQLite schema: int8, read as a JS number (safe until year 287,396). */
export const ms = (name: string) => bigint(name, { mode: 'number' })

/** PostgreSQL's full-text document type (drizzle-orm has no built-in column for it). */
export const tsvector = customType<{ data: string }>({
  dataType: () => 'tsvector',
})
