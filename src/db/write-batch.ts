/**
 * Group commit on one SQLite connection: the request writes of one event-loop turn share one
 * transaction (BEGIN IMMEDIATE), each in its own savepoint, so a failing one rolls back only
 * itself; the batch commits once, after the turn (setImmediate). A commit in WAL mode costs about
 * as much for one small write as for fifty, and under load this halves a step's server time
 * (docs/performance.md). Replies wait for `committed()` (src/http/plugins/unit-of-work.ts), so
 * nothing is reported before it is durable.
 */
import type Database from 'better-sqlite3'

interface Waiter {
  resolve: () => void
  reject: (err: unknown) => void
}

export class WriteBatch {
  private readonly sqlite: Database.Database
  private waiting: Waiter[] = []
  private rollbacks: Array<() => void> = []
  private isOpen = false
  /** Built once: better-sqlite3 builds its wrappers on every `transaction()` call. */
  private readonly savepoint: (work: () => unknown) => unknown

  constructor(sqlite: Database.Database) {
    this.sqlite = sqlite
    this.savepoint = sqlite.transaction((work: () => unknown) => work())
  }

  /** True while a batch holds uncommitted writes. */
  get open(): boolean {
    return this.isOpen
  }

  /** Runs `work` in a savepoint of the open batch, opening one if needed. A throw rolls back `work` alone. */
  run<T>(work: () => T): T {
    // Inside a transaction someone else opened, that caller owns the commit.
    if (!this.isOpen && !this.sqlite.inTransaction) {
      this.sqlite.exec('BEGIN IMMEDIATE')
      this.isOpen = true
      setImmediate(() => this.flush())
    }
    return this.savepoint(work) as T
  }

  /** `fn` runs if the open batch fails to commit (its writes are gone). */
  onRollback(fn: () => void): void {
    if (this.isOpen) this.rollbacks.push(fn)
  }

  /** Resolves once no batch is open (at once if none is); rejects if that batch failed to commit. */
  committed(): Promise<void> {
    if (!this.isOpen) return Promise.resolve()
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }))
  }

  /** Commits the open batch now (its timer, shutdown, tests). */
  flush(): void {
    if (!this.isOpen) return
    const waiting = this.waiting
    const rollbacks = this.rollbacks
    this.waiting = []
    this.rollbacks = []
    this.isOpen = false
    try {
      this.sqlite.exec('COMMIT')
    } catch (err) {
      if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK')
      for (const r of rollbacks) r()
      for (const w of waiting) w.reject(err)
      return
    }
    for (const w of waiting) w.resolve()
  }
}
