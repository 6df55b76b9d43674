/**
 * Group commit on one SQLite connection: the writes of requests handled in the same event-loop
 * turn share one transaction, each in its own SAVEPOINT (a failing one rolls back only itself),
 * and the batch commits once, in the check phase after the turn (setImmediate). A commit costs
 * about as much for one small write as for fifty, so under load this is most of the write cost.
 *
 * Durability is kept: `run` resolves only after the COMMIT, and `committed()` lets anything
 * else that wrote on the connection while a batch was open (its writes join the batch) wait for
 * it before replying (the app's onSend hook does).
 */
import type Database from 'better-sqlite3'

interface Waiter {
  resolve: () => void
  reject: (err: unknown) => void
}

export class GroupCommit {
  private readonly db: Database.Database
  private waiting: Waiter[] = []
  private rollbacks: Array<() => void> = []
  private batchOpen = false
  /** Built once: better-sqlite3 builds four wrappers per `transaction()` call, a cost per request otherwise. */
  private readonly inSavepoint: (work: () => unknown) => unknown
  /** Transactions committed, and how many runs they carried (for tests and benchmarks). */
  readonly stats = { batches: 0, runs: 0 }

  constructor(db: Database.Database) {
    this.db = db
    this.inSavepoint = db.transaction((work: () => unknown) => work())
  }

  /** True while a batch holds uncommitted writes. */
  get open(): boolean {
    return this.batchOpen
  }

  /**
   * Runs `work` in a savepoint of the current batch (opening one: BEGIN IMMEDIATE) and resolves
   * with its value once the batch has committed; rejects at once if `work` throws (its savepoint
   * rolled back). `onRollback` runs if the batch as a whole fails to commit. Inside a
   * transaction someone else opened, `work` simply runs in it (a savepoint) and that caller
   * owns the commit.
   */
  run<T>(work: () => T, onRollback?: () => void): Promise<T> {
    if (!this.batchOpen && this.db.inTransaction) {
      try {
        return Promise.resolve(this.inSavepoint(work) as T)
      } catch (err) {
        return Promise.reject(err)
      }
    }
    try {
      if (!this.batchOpen) this.begin()
      const value = this.inSavepoint(work) as T
      if (onRollback) this.rollbacks.push(onRollback)
      this.stats.runs++
      return new Promise<T>((resolve, reject) => this.waiting.push({ resolve: () => resolve(value), reject }))
    } catch (err) {
      return Promise.reject(err)
    }
  }

  /** Registers `fn` to run if the open batch fails to commit (a write joined it outside `run`). */
  onRollback(fn: () => void): void {
    if (this.batchOpen) this.rollbacks.push(fn)
  }

  /** Resolves when no batch is open any more (at once if none is); rejects if that batch failed. */
  committed(): Promise<void> {
    if (!this.batchOpen) return Promise.resolve()
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }))
  }

  /** Commits the open batch now (shutdown, tests). */
  flush(): void {
    if (!this.batchOpen) return
    const waiting = this.waiting
    const rollbacks = this.rollbacks
    this.waiting = []
    this.rollbacks = []
    this.batchOpen = false
    try {
      this.db.exec('COMMIT')
      this.stats.batches++
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK')
      for (const r of rollbacks) r()
      for (const w of waiting) w.reject(err)
      return
    }
    for (const w of waiting) w.resolve()
  }

  private begin(): void {
    // IMMEDIATE takes the write lock up front, as the single-request path does.
    this.db.exec('BEGIN IMMEDIATE')
    this.batchOpen = true
    setImmediate(() => this.flush())
  }
}

const groups = new WeakMap<Database.Database, GroupCommit>()

/** The one GroupCommit of a connection (services and the HTTP layer share it). */
export function groupCommitOf(db: Database.Database): GroupCommit {
  let g = groups.get(db)
  if (g === undefined) {
    g = new GroupCommit(db)
    groups.set(db, g)
  }
  return g
}
