import type Database from 'better-sqlite3'
import type { WriteBatch } from './write-batch.js'

/**
 * One request's write: a service runs its statements through `run`, and whatever else must commit
 * with them (the request's idempotency record, written by the idempotency plugin through `also`)
 * runs with the result inside the same transaction. Either all of it commits or none does.
 */
export interface UnitOfWork {
  run<T>(fn: () => T): T
  /** `fn` runs if what `run` wrote is rolled back after `run` returned (a group commit that failed). */
  onRollback(fn: () => void): void
}

type Also = (result: unknown) => void

export class SqliteUnitOfWork implements UnitOfWork {
  private readonly sqlite: Database.Database
  private readonly batch: WriteBatch | undefined
  private readonly extra: Also[] = []

  /** With a batch, the write joins the group commit of its event-loop turn (HTTP requests). */
  constructor(sqlite: Database.Database, batch?: WriteBatch) {
    this.sqlite = sqlite
    this.batch = batch
  }

  /** `write` runs with the result of the next `run` that succeeds, inside its transaction. */
  also(write: Also): void {
    this.extra.push(write)
  }

  /**
   * Runs `fn` and the extra writes in one transaction (or one savepoint of the open batch), taking
   * the write lock before the first read (IMMEDIATE), so no other connection's write lands between
   * what `fn` reads and what it writes. Inside a caller's transaction it is a savepoint of it. A
   * run that throws keeps the extra writes for the next one (a retried write).
   */
  run<T>(fn: () => T): T {
    const work = () => {
      const result = fn()
      for (const write of this.extra) write(result)
      return result
    }
    let result: T
    if (this.batch !== undefined) result = this.batch.run(work)
    else {
      const tx = this.sqlite.transaction(work)
      result = this.sqlite.inTransaction ? tx() : tx.immediate()
    }
    this.extra.length = 0
    return result
  }

  onRollback(fn: () => void): void {
    this.batch?.onRollback(fn)
  }
}
