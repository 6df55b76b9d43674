/**
 * WAL checkpoints on a worker thread. SQLite's automatic checkpoint runs inside whichever COMMIT
 * pushes the WAL past 1,000 pages: that request copies the pages back into the database file and
 * waits for its fsync on the event loop, which stops every other request meanwhile. Here a worker
 * with its own connection runs PASSIVE checkpoints on a timer instead (they never block writers or
 * readers), and the next write transaction restarts the WAL from its start once all of it is back
 * in the database file.
 *
 * Under sustained writes that moment never comes: each pass ends a few commits behind, and the WAL
 * grew past 1.4 GB in 20 s of `bench:http`. So the main connection keeps an automatic checkpoint
 * at a higher mark (`maxWalPages`) as a backstop: it copies only what the worker has not, and the
 * WAL restarts after it. That checkpoint is skipped while the worker holds the checkpoint lock, so
 * once the WAL is past the mark the worker stops repeating its pass (one pass an interval still
 * runs), and the file is truncated back to the mark after a restart (`journal_size_limit`). If the
 * worker dies, the main connection goes back to SQLite's default.
 */
import type Database from 'better-sqlite3'
import { Worker, type WorkerOptions } from 'node:worker_threads'
import { DRIVER } from './sqlite-driver.js'

/** SQLite's own default, restored if the worker fails. */
const AUTO_CHECKPOINT_PAGES = 1000
/** The main connection's backstop: ~32 MB of WAL at 4 KiB pages. */
const BACKSTOP_PAGES = 8000

export interface CheckpointerOptions {
  /** Time between passes; a pass repeats at once while writers keep the WAL ahead of it. */
  intervalMs?: number
  /** Module the worker loads the driver from (tests point it elsewhere to make the worker fail). */
  driver?: string
  /** WAL size, in pages, at which the main connection checkpoints itself after all. */
  maxWalPages?: number
  onError?: (err: unknown) => void
  /** After each pass: the WAL's frames and how many are back in the database (equal: the next write restarts it). */
  onPass?: (result: CheckpointPass) => void
}

/** What `PRAGMA wal_checkpoint` reported at the end of a pass. */
export interface CheckpointPass {
  busy: number
  log: number
  checkpointed: number
}

export interface Checkpointer {
  /** Stops the worker after its current pass and closes its connection. */
  stop(): Promise<void>
}

/** What the worker thread (checkpoint-worker.ts) is started with. */
export interface CheckpointWorkerData {
  path: string
  driver: string
  intervalMs: number
  maxWalPages: number
  report: boolean
}

/**
 * The worker thread's module: the built JavaScript beside this file in dist/. Run from the source
 * (tsx, tests), a worker does not inherit the TypeScript loader: it registers tsx, then imports
 * the TypeScript.
 */
function workerOf(workerData: CheckpointWorkerData, options: WorkerOptions): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./checkpoint-worker.js', import.meta.url), { ...options, workerData })
  const tsx = import.meta.resolve('tsx/esm/api')
  const source = new URL('./checkpoint-worker.ts', import.meta.url).href
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}) })`, { ...options, workerData, eval: true })
}

/** Moves the checkpoints of `sqlite` (a file database in WAL mode) to a worker thread. */
export function startCheckpointer(sqlite: Database.Database, opts: CheckpointerOptions = {}): Checkpointer {
  const driver = opts.driver ?? DRIVER
  const maxWalPages = opts.maxWalPages ?? BACKSTOP_PAGES
  // 0 would turn the backstop off, and with it the bound on the WAL.
  if (!Number.isSafeInteger(maxWalPages) || maxWalPages < 1) throw new RangeError(`maxWalPages must be a positive integer, got ${maxWalPages}`)
  const workerData: CheckpointWorkerData = { path: sqlite.name, driver, intervalMs: opts.intervalMs ?? 100, maxWalPages, report: opts.onPass !== undefined }
  const worker = workerOf(workerData, {
    // It allocates next to nothing; small heaps keep its share of RSS small.
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
  })
  worker.unref()
  // Only once the worker exists: a constructor that throws leaves SQLite's own checkpoints in place.
  const pageSize = sqlite.pragma('page_size', { simple: true }) as number
  sqlite.pragma(`wal_autocheckpoint = ${maxWalPages}`)
  sqlite.pragma(`journal_size_limit = ${maxWalPages * pageSize}`)
  let stopping = false
  let failed = false
  const fallBack = (err: unknown) => {
    if (failed) return
    failed = true
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`)
    opts.onError?.(err)
  }
  worker.on('error', fallBack)
  if (opts.onPass) worker.on('message', opts.onPass)
  worker.on('exit', (code) => {
    if (!stopping && code !== 0) fallBack(new Error(`WAL checkpoint worker exited with code ${code}`))
  })
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  let stopped: Promise<void> | undefined
  const stop = async () => {
    stopping = true
    worker.postMessage('stop')
    // A pass in progress finishes first. One stuck in an fsync is not worth holding shutdown for,
    // and terminate() cannot interrupt it: after a second, go on without waiting for the thread.
    let timeout: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((resolve) => (timeout = setTimeout(() => resolve('late'), 1_000)))
    if ((await Promise.race([exited, late])) === 'late') void worker.terminate()
    clearTimeout(timeout)
  }
  return { stop: () => (stopped ??= stop()) }
}
