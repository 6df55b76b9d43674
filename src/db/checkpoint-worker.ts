/**
 * The checkpoint worker's thread (checkpointer.ts starts it): its own connection runs PASSIVE
 * checkpoints on a timer until told to stop. Imports types only, so from the source it runs
 * through tsx and from dist/ as it is built.
 */
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'
import type Database from 'better-sqlite3'
import type { CheckpointPass, CheckpointWorkerData } from './checkpointer.js'

const { path, driver, intervalMs, maxWalPages, report } = workerData as CheckpointWorkerData
const port = parentPort!
const Driver = createRequire(import.meta.url)(driver) as typeof Database
const db = new Driver(path, { timeout: 0 })
db.pragma('synchronous = NORMAL')
const checkpoint = db.prepare<[], CheckpointPass>('PRAGMA wal_checkpoint(PASSIVE)')
let timer: NodeJS.Timeout | undefined

function pass(): void {
  // Writers may append while a pass copies; a few quick repeats let it catch up so the WAL restarts.
  // Past the backstop mark they would keep the main connection's own checkpoint out: sit out instead.
  let result: CheckpointPass | undefined
  try {
    for (let i = 0; i < 4; i++) {
      result = checkpoint.get()!
      if (result.busy !== 0 || result.checkpointed >= result.log || result.log >= maxWalPages) break
    }
  } catch (err) {
    // A full disk (the database file cannot grow) is waited out: the next pass tries again.
    if ((err as { code?: string }).code !== 'SQLITE_FULL') throw err
  }
  if (report && result) port.postMessage(result)
  timer = setTimeout(pass, intervalMs)
}

port.on('message', (message) => {
  if (message !== 'stop') return
  clearTimeout(timer)
  db.close()
  port.close()
})
pass()
