import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import { createDatabaseIn, onCluster } from './cluster.js'
import { TEMPLATE } from './template.js'

/** The run's cluster URL, or null when PostgreSQL tests skip (global-setup.ts said why). */
export const pgUrl: string | null = inject('pgUrl')

/**
 * A new database in the run's cluster: tests never share schema state. Empty, or with
 * `migrated`, a copy of the migrated template.
 */
export async function createPgDatabase(options: { migrated?: boolean } = {}): Promise<string> {
  if (pgUrl === null) throw new Error('no PostgreSQL cluster in this run')
  return createDatabaseIn(pgUrl, `gk_${randomBytes(6).toString('hex')}`, options.migrated ? TEMPLATE : undefined)
}

/** Drops a database made by createPgDatabase once its connections are closed. */
export async function dropPgDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1)
  await onCluster(pgUrl!, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
}
