import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'
import { TEMPLATE } from './template.js'

/** The run's cluster URL, or null when PostgreSQL tests skip (global-setup.ts said why). */
export const pgUrl: string | null = inject('pgUrl')

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  if (pgUrl === null) throw new Error('no PostgreSQL cluster in this run')
  const client = new pg.Client({ connectionString: pgUrl })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * A new database in the run's cluster: tests never share schema state. Empty, or with
 * `migrated`, a copy of the migrated template.
 */
export async function createPgDatabase(options: { migrated?: boolean } = {}): Promise<string> {
  const name = `gk_${randomBytes(6).toString('hex')}`
  await admin((c) => c.query(`CREATE DATABASE ${name}${options.migrated ? ` TEMPLATE ${TEMPLATE}` : ''}`))
  const url = new URL(pgUrl!)
  url.pathname = `/${name}`
  return url.toString()
}

/** Drops a database made by createPgDatabase once its connections are closed. */
export async function dropPgDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1)
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
}
