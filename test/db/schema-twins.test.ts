import { getTableConfig as pgConfig, PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as sqliteConfig, SQLiteTable } from 'drizzle-orm/sqlite-core'
import { expect, it } from 'vitest'
import * as pg from '../../src/db/pg-schema/index.js'
import * as sqlite from '../../src/db/schema/index.js'

// What one dialect has and the other must not: SQLite's FTS5 bookkeeping, PostgreSQL's generated
// search documents and its shared rate-limit counts.
const SQLITE_ONLY = ['reminder_doc_blocks', 'reminders.doc_id']
const PG_ONLY = ['reminders.search_doc', 'reminders.context_doc', 'rate_limits']

function shape(tables: Array<{ name: string; columns: Array<{ name: string; notNull: boolean }> }>, only: string[]) {
  const out: Record<string, string[]> = {}
  for (const t of tables) {
    if (only.includes(t.name)) continue
    out[t.name] = t.columns
      .filter((c) => !only.includes(`${t.name}.${c.name}`))
      .map((c) => `${c.name}${c.notNull ? ' not null' : ''}`)
      .sort()
  }
  return out
}

it('the PostgreSQL schema is the twin of the SQLite one: the same tables and columns, nullability included', () => {
  const sqliteTables = Object.values(sqlite)
    .filter((t) => t instanceof SQLiteTable)
    .map((t) => sqliteConfig(t))
  const pgTables = Object.values(pg)
    .filter((t) => t instanceof PgTable)
    .map((t) => pgConfig(t))
  expect(shape(pgTables, PG_ONLY)).toEqual(shape(sqliteTables, SQLITE_ONLY))
})
