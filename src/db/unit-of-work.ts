import type { SqlDatabase } from './database.js'

type Also = (result: unknown) => Promise<void> | void

/**
 * One request's write: a service runs its statements through `run`, and whatever else must commit
 * with them (the request's idempotency record, written by the idempotency plugin through `also`)
 * runs with the result inside the same transaction. Either all of it commits or none does.
 */
export class UnitOfWork {
  private readonly db: SqlDatabase
  private readonly extra: Also[] = []

  constructor(db: SqlDatabase) {
    this.db = db
  }

  /** `write` runs with the result of the next `run` that succeeds, inside its transaction. */
  also(write: Also): void {
    this.extra.push(write)
  }

  /**
   * Runs `fn` and the extra writes in one transaction; inside a caller's transaction, a savepoint
   * of it. A run that throws keeps the extra writes for the next one (a retried write). `atomic`
   * says `fn` is all-or-nothing on its own (one statement, or a transaction of its own): with no
   * extra writes it then runs without a transaction around it (sparing PostgreSQL a BEGIN and a COMMIT).
   */
  async run<T>(fn: () => Promise<T>, opts: { atomic?: boolean } = {}): Promise<T> {
    if (opts.atomic === true && this.extra.length === 0) return fn()
    const result = await this.db.transaction(async () => {
      const value = await fn()
      for (const write of this.extra) await write(value)
      return value
    })
    this.extra.length = 0
    return result
  }

  /** `fn` runs if what `run` wrote is rolled back after `run` resolved (a group commit that failed). */
  onRollback(fn: () => void): void {
    this.db.onRollback(fn)
  }
}
