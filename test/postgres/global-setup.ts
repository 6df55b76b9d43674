import type { TestProject } from 'vitest/node'
import { runPgMigrations } from '../../src/db/pg-migrate.js'
import { openPg } from '../../src/db/postgres.js'
import { createDatabaseIn, findPgBin, HOW_TO_ENABLE, startPgCluster, type PgCluster } from './cluster.js'
import { TEMPLATE } from './template.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test run's PostgreSQL cluster, or null when the machine has none (its tests skip). */
    pgUrl: string | null
  }
}

// Each test project (vitest.config.ts) runs this setup; they share one cluster through the main process's globals.
const shared = globalThis as { goalkeeperPg?: { cluster: Promise<PgCluster | undefined>; users: number } }

/** One cluster for the whole run; each test makes its own database in it (./database.ts). */
export async function setup(project: TestProject): Promise<void> {
  shared.goalkeeperPg ??= { cluster: startShared(), users: 0 }
  shared.goalkeeperPg.users++
  const cluster = await shared.goalkeeperPg.cluster
  project.provide('pgUrl', cluster?.url ?? null)
}

export async function teardown(): Promise<void> {
  const entry = shared.goalkeeperPg
  if (entry === undefined || --entry.users > 0) return
  shared.goalkeeperPg = undefined
  ;(await entry.cluster)?.stop()
}

async function startShared(): Promise<PgCluster | undefined> {
  const bin = findPgBin()
  if (bin === undefined) {
    // Under CI a missing PostgreSQL is a failure, never a silent skip.
    if (process.env.CI === 'true') throw new Error(`CI=true but no PostgreSQL server binaries: ${HOW_TO_ENABLE}.`)
    console.warn(`PostgreSQL tests skipped: to run them, ${HOW_TO_ENABLE}.`)
    return undefined
  }
  const cluster = await startPgCluster(bin)
  await createTemplate(cluster.url)
  return cluster
}

/** A migrated database that each test's database is copied from (`CREATE DATABASE … TEMPLATE`): far faster than migrating each. */
async function createTemplate(url: string): Promise<void> {
  const handle = openPg(await createDatabaseIn(url, TEMPLATE), { max: 1 })
  try {
    await runPgMigrations(handle)
  } finally {
    await handle.close()
  }
}
