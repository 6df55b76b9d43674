import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { endianness, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startCheckpointer, type Checkpointer } from '../../src/db/checkpointer.js'
import { openDb, type SqliteHandle } from '../../src/db/client.js'

let dir: string
let handle: SqliteHandle
let checkpointer: Checkpointer | undefined

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gk-ckpt-'))
  handle = openDb(join(dir, 'test.db'))
  handle.sqlite.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)')
})

afterEach(async () => {
  await checkpointer?.stop()
  checkpointer = undefined
  if (handle.sqlite.open) await handle.close()
  rmSync(dir, { recursive: true, force: true })
})

const dbBytes = () => statSync(join(dir, 'test.db')).size
const walBytes = () => statSync(join(dir, 'test.db-wal')).size
const autoCheckpoint = () => handle.sqlite.pragma('wal_autocheckpoint', { simple: true })
/** The WAL index's header (https://www.sqlite.org/walformat.html, native byte order): the WAL's frames and how many are back in the database file. */
function walIndex(): { frames: number; backfilled: number } {
  const shm = readFileSync(join(dir, 'test.db-shm'))
  const u32 = (offset: number) => (endianness() === 'LE' ? shm.readUInt32LE(offset) : shm.readUInt32BE(offset))
  return { frames: u32(16), backfilled: u32(96) }
}

/** ~1 MB in 40 transactions by default. */
function write(rounds = 40): void {
  const insert = handle.sqlite.prepare('INSERT INTO t (body) VALUES (?)')
  for (let r = 0; r < rounds; r++)
    handle.sqlite.transaction(() => {
      for (let i = 0; i < 25; i++) insert.run('x'.repeat(1000))
    })()
}

async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('WAL checkpointer', () => {
  it("leaves the main connection only a backstop checkpoint, far above SQLite's 1,000 pages", () => {
    expect(autoCheckpoint()).toBe(1000)
    checkpointer = startCheckpointer(handle.sqlite, { intervalMs: 10 })
    expect(autoCheckpoint()).toBe(8000)
    // And a WAL file grown past it is cut back to it when the WAL restarts.
    expect(handle.sqlite.pragma('journal_size_limit', { simple: true })).toBe(8000 * 4096)
  })

  it('refuses a backstop of 0 pages, which would turn it off', () => {
    expect(() => startCheckpointer(handle.sqlite, { maxWalPages: 0 })).toThrow(RangeError)
    expect(autoCheckpoint()).toBe(1000)
  })

  it('copies committed pages into the database file from the worker, pass after pass', async () => {
    checkpointer = startCheckpointer(handle.sqlite, { intervalMs: 10 })
    // ~370 WAL pages a round stays under the main connection's backstop: only the worker grows the database file.
    for (let round = 1; round <= 2; round++) {
      const before = dbBytes()
      write()
      await until(() => dbBytes() > before + 900_000)
    }
    expect(handle.sqlite.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 2000 })
  })

  it('lets the WAL restart, so it stays bounded across many write bursts', async () => {
    checkpointer = startCheckpointer(handle.sqlite, { intervalMs: 5 })
    for (let burst = 0; burst < 10; burst++) {
      write(8)
      // Once the worker has put the whole burst back in the database file, the next write starts the
      // WAL over. Read from the WAL index itself: a pass's report may come from a pass that ran in the
      // middle of the burst and caught up with only its first commits.
      await until(() => {
        const { frames, backfilled } = walIndex()
        return frames > 0 && backfilled === frames
      })
    }
    // 10 bursts of ~200 KB: without restarts the WAL would hold all ~2 MB of them.
    expect(walBytes()).toBeLessThan(700_000)
  }, 60_000)

  it('keeps the WAL at the backstop under writes that never pause, which the worker alone never restarts', async () => {
    // One worker pass at start, then none: the bound comes from the main connection's backstop alone
    // (how closely the worker keeps up depends on the disk's fsync time, not on this code).
    let firstPass!: () => void
    const passed = new Promise<void>((resolve) => {
      firstPass = resolve
    })
    checkpointer = startCheckpointer(handle.sqlite, { intervalMs: 60_000, maxWalPages: 300, onPass: () => firstPass() })
    // Writing while that pass holds the checkpoint lock would keep the backstop out (a race, not the bound).
    await passed
    // ~5 MB in one synchronous run (~1,900 WAL pages without a checkpoint).
    write(200)
    expect(handle.sqlite.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 5_000 })
    // The backstop (300 pages) plus the commit that crossed it (~9 pages).
    expect(walBytes()).toBeLessThan(400 * 4120)
  })

  it('stops cleanly: the last close checkpoints and removes the WAL', async () => {
    checkpointer = startCheckpointer(handle.sqlite, { intervalMs: 10 })
    write(4)
    await checkpointer.stop()
    await handle.close()
    expect(existsSync(join(dir, 'test.db-wal'))).toBe(false)
    const reopened = openDb(join(dir, 'test.db'))
    expect(reopened.sqlite.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 100 })
    await reopened.close()
  })

  it('stops within about a second even when the worker never gets to its stop message', async () => {
    // A driver that keeps the worker's thread busy for a minute before it could listen.
    const stuck = join(dir, 'stuck-driver.cjs')
    writeFileSync(stuck, 'const end = Date.now() + 60_000\nwhile (Date.now() < end) {}\n')
    checkpointer = startCheckpointer(handle.sqlite, { driver: stuck })
    const t0 = Date.now()
    await checkpointer.stop()
    expect(Date.now() - t0).toBeLessThan(3_000)
  })

  it('falls back to automatic checkpoints when the worker fails', async () => {
    const errors: unknown[] = []
    checkpointer = startCheckpointer(handle.sqlite, { driver: join(dir, 'no-such-driver.js'), onError: (e) => errors.push(e) })
    expect(autoCheckpoint()).toBe(8000)
    await until(() => errors.length > 0)
    expect(autoCheckpoint()).toBe(1000)
    expect(errors).toHaveLength(1)
  })
})
