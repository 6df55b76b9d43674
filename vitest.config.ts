import { defineConfig } from 'vitest/config'

export default defineConfig({
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
