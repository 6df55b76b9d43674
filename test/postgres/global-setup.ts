import type { TestProject } from 'vitest/node'
import pg from 'pg'
import { runPgMigrations } from '../../src/db/pg-migrate.js'
import { openPg } from '../../src/db/postgres.js'
import { findPgBin, HOW_TO_ENABLE, startPgCluster, type PgCluster } from './cluster.js'
import { TEMPLATE } from './template.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test run's PostgreSQL cluster, or null when the machine has none (its tests skip). */
    pgUrl: string | null
  }
}

let cluster: PgCluster | undefined

/** One cluster for the whole run; each test file makes its own database in it (./database.ts). */
export async function setup(project: TestProject): Promise<void> {
  const bin = findPgBin()
  if (bin === undefined) {
    // Under CI a missing PostgreSQL is a failure, never a silent skip.
    if (process.env.CI === 'true') throw new Error(`CI=true but no PostgreSQL server binaries: ${HOW_TO_ENABLE}.`)
    console.warn(`PostgreSQL tests skipped: to run them, ${HOW_TO_ENABLE}.`)
    project.provide('pgUrl', null)
    return
  }
  cluster = await startPgCluster(bin)
  await createTemplate(cluster.url)
  project.provide('pgUrl', cluster.url)
}

export function teardown(): void {
  cluster?.stop()
}

/** A migrated database that each test's database is copied from (`CREATE DATABASE … TEMPLATE`): far faster than migrating each. */
async function createTemplate(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${TEMPLATE}`)
  } finally {
    await admin.end()
  }
  const target = new URL(url)
  target.pathname = `/${TEMPLATE}`
  const handle = openPg(target.toString(), { max: 1 })
  try {
    await runPgMigrations(handle)
  } finally {
    await handle.close()
  }
}
