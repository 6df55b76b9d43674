import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MIGRATIONS_FOLDER } from '../../src/db/migrate.js'

/**
 * A copy of the migrations folder holding only the migrations before `tag` (e.g. '0011'), so a
 * test can build a database as it was before a migration, write rows, then apply the rest.
 */
export function migrationsBefore(tag: string): { folder: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gk-mig-'))
  const folder = join(dir, 'migrations')
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true })
  for (const f of readdirSync(folder)) if (f.endsWith('.sql') && f >= tag) rmSync(join(folder, f))
  const journalFile = join(folder, 'meta', '_journal.json')
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] }
  journal.entries = journal.entries.filter((e) => e.tag < tag)
  writeFileSync(journalFile, JSON.stringify(journal))
  return { folder, dispose: () => rmSync(dir, { recursive: true, force: true }) }
}
