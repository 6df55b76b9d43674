import type { TestProject } from 'vitest/node'
import { findPgBin, HOW_TO_ENABLE, startPgCluster, type PgCluster } from './cluster.js'

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
  project.provide('pgUrl', cluster.url)
}

export function teardown(): void {
  cluster?.stop()
}
