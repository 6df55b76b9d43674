import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'

/** The run's cluster URL, or null when PostgreSQL tests skip (global-setup.ts said why). */
export const pgUrl: string | null = inject('pgUrl')

/** A new, empty database in the run's cluster: tests never share schema state. */
export async function createPgDatabase(): Promise<string> {
  if (pgUrl === null) throw new Error('no PostgreSQL cluster in this run')
  const name = `gk_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: pgUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(pgUrl)
  url.pathname = `/${name}`
  return url.toString()
}
