import { defineConfig } from 'vitest/config'
import { findPgBin } from './test/postgres/cluster.js'

// The client package's own export condition: tests import `@goalkeeper/client` from its source.
const conditions = ['goalkeeper-source', 'node', 'development|production']

// The service and HTTP suites run twice: on SQLite and on PostgreSQL (test/helpers.ts picks the
// backend). Without PostgreSQL server binaries the second run is left out (global-setup.ts says
// how to enable it; under CI=true it fails instead).
const BOTH_BACKENDS = ['test/{http,sessions,reminders,webhooks,idempotency,mcp}/**/*.test.ts']
// PostgreSQL's own faults (test/faults): its project only.
const POSTGRES_ONLY = ['test/faults/pg-*.test.ts']
// Tests that replace a module (vi.mock) need the module graph fresh: a worker that kept the app's
// modules from an earlier file (isolate: false below) would hand them the real one.
const ISOLATED = ['test/**/*.isolated.test.ts']
const postgres = findPgBin() !== undefined || process.env.CI === 'true'

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    // better-sqlite3 is a native addon: forks, never threads.
    pool: 'forks',
    // A worker keeps its modules from one test file to the next: importing the app again for every
    // file cost about half of the suite's CPU time. Tests build their own apps and databases.
    isolate: false,
    // Most tests wait on sockets, timers and PostgreSQL: three workers keep two cores busy.
    maxWorkers: 3,
    // A throwaway PostgreSQL cluster for the run (skipped, with a line saying why, where none is installed).
    globalSetup: ['test/postgres/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      // `include` per project: an inherited one would be added to the project's own.
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: [...POSTGRES_ONLY, ...ISOLATED] } },
      { extends: true, test: { name: 'isolated', include: ISOLATED, isolate: true } },
      ...(postgres ? [{ extends: true as const, test: { name: 'postgres', include: [...BOTH_BACKENDS, ...POSTGRES_ONLY], exclude: ISOLATED, env: { GOALKEEPER_TEST_BACKEND: 'postgres' } } }] : []),
    ],
  },
})
