import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { wordTableLoaded } from '../src/engine/similarity/word-info.js'
import { start } from '../src/server.js'

// In a fresh module graph (the isolated project), so no earlier test file has read the table.
it('the server reads the word table before it listens, not in the first request', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gk-warm-'))
  try {
    expect(wordTableLoaded()).toBe(false)
    const app = await start({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', GOALKEEPER_DB: join(dir, 'db.sqlite'), GOALKEEPER_ADMIN_TOKEN: 'a-long-enough-admin-token' })
    try {
      expect(wordTableLoaded()).toBe(true)
    } finally {
      await app.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
