import { defineConfig } from 'vitest/config'

// The client package's own export condition: tests import `@goalkeeper/client` from its source.
const conditions = ['goalkeeper-source', 'module', 'node', 'development|production']

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    // better-sqlite3 is a native addon: forks, never threads.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // A throwaway PostgreSQL cluster for the run (skipped, with a line saying why, where none is installed).
    globalSetup: ['test/postgres/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
})
