import { AsyncLocalStorage } from 'node:async_hooks'
import type Database from 'better-sqlite3'
import type { Params, SqlDatabase } from './database.js'

/**
 * PgDatabase's interface on one better-sqlite3 connection, so a repository written against it runs
 * on either dialect. The statements themselves stay synchronous (prepared once per SQL text);
 * what needs care is the transaction: the connection is shared by every request, so a
 * transaction's async work must not interleave with another's. Top-level transactions queue
 * behind one another; work inside one finds it through AsyncLocalStorage and nests as savepoints;
 * a write outside any transaction while one is open waits its turn instead of joining it. A read
 * outside a transaction runs at once and may see the open transaction's uncommitted rows (one
 * connection has one view), which PostgreSQL would not show.
 *
 * With `groupCommit`, the top-level transactions of one event-loop turn share one real transaction
 * (BEGIN IMMEDIATE), each in a savepoint of its own, so a failing one rolls back alone; the batch
 * commits once, after the turn. A WAL commit costs about as much for one small write as for fifty
 * (docs/performance.md). A transaction then resolves when its savepoint is released: a caller that
 * reports the write (an HTTP reply) waits for `committed()`.
 */
export class SqliteDatabase implements SqlDatabase {
  readonly dialect = 'sqlite'
  readonly sqlite: Database.Database
  /** Prepared on first use, once per SQL text. */
  private readonly statements = new Map<string, Database.Statement>()
  private readonly current = new AsyncLocalStorage<{ depth: number }>()
  /** Settles when the last queued top-level transaction has finished. */
  private tail: Promise<unknown> = Promise.resolve()
  private open = 0
  private readonly groupCommit: boolean
  /** The open batch: who waits for its COMMIT, and what to undo if it fails. */
  private batch: { waiting: Array<{ resolve: () => void; reject: (err: unknown) => void }>; rollbacks: Array<() => void> } | undefined

  constructor(sqlite: Database.Database, options: { groupCommit?: boolean } = {}) {
    this.sqlite = sqlite
    this.groupCommit = options.groupCommit ?? false
  }

  /** Resolves once the batch holding this turn's writes has committed (at once when none is open); rejects if it failed. */
  committed(): Promise<void> {
    const batch = this.batch
    if (batch === undefined) return Promise.resolve()
    return new Promise((resolve, reject) => batch.waiting.push({ resolve, reject }))
  }

  /** `fn` runs if the open batch fails to commit (its writes are gone: a cache ahead of them must let go). */
  onRollback(fn: () => void): void {
    this.batch?.rollbacks.push(fn)
  }

  get inTransaction(): boolean {
    return this.current.getStore() !== undefined
  }

  async all<R>(sql: string, params: Params = []): Promise<R[]> {
    return this.statement(sql).all(...args(params)) as R[]
  }

  async get<R>(sql: string, params: Params = []): Promise<R | undefined> {
    return this.statement(sql).get(...args(params)) as R | undefined
  }

  /** The number of rows the statement changed. */
  async run(sql: string, params: Params = []): Promise<number> {
    if ((this.open > 0 || this.batch !== undefined) && !this.inTransaction) return this.transaction(() => this.run(sql, params))
    return this.statement(sql).run(...args(params)).changes
  }

  /** Runs `work` in a transaction (a savepoint of the open one when nested): all of it commits or none. */
  transaction<T>(work: () => Promise<T>): Promise<T> {
    const open = this.current.getStore()
    if (open !== undefined) return this.savepoint(open.depth + 1, work)
    const turn = this.tail.then(() => this.topLevel(work))
    this.tail = turn.catch(() => undefined)
    return turn
  }

  private async topLevel<T>(work: () => Promise<T>): Promise<T> {
    if (this.groupCommit) {
      if (this.batch === undefined) {
        this.sqlite.exec('BEGIN IMMEDIATE')
        this.batch = { waiting: [], rollbacks: [] }
        // After this turn's transactions, queued behind them: the next turn's start a new batch.
        setImmediate(() => {
          // flush reports a failed COMMIT to the batch's waiters; nothing is left to catch here
          // but a ROLLBACK on a connection closed meanwhile.
          this.tail = this.tail.then(() => this.flush()).catch(() => undefined)
        })
      }
      return this.savepoint(1, work)
    }
    this.open++
    // IMMEDIATE takes the write lock before the first read: no other process writes in between.
    this.sqlite.exec('BEGIN IMMEDIATE')
    try {
      const result = await this.current.run({ depth: 0 }, work)
      this.sqlite.exec('COMMIT')
      return result
    } catch (err) {
      if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK')
      throw err
    } finally {
      this.open--
    }
  }

  /** Commits what is pending and closes the connection. */
  async close(): Promise<void> {
    await this.tail
    this.flush()
    this.sqlite.close()
  }

  /** Commits the open batch now (its timer, shutdown). */
  private flush(): void {
    const batch = this.batch
    if (batch === undefined) return
    this.batch = undefined
    try {
      this.sqlite.exec('COMMIT')
    } catch (err) {
      if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK')
      for (const undo of batch.rollbacks) undo()
      for (const w of batch.waiting) w.reject(err)
      return
    }
    for (const w of batch.waiting) w.resolve()
  }

  private async savepoint<T>(depth: number, work: () => Promise<T>): Promise<T> {
    const name = `sp${depth}`
    this.sqlite.exec(`SAVEPOINT ${name}`)
    try {
      const result = await this.current.run({ depth }, work)
      this.sqlite.exec(`RELEASE ${name}`)
      return result
    } catch (err) {
      this.sqlite.exec(`ROLLBACK TO ${name}`)
      this.sqlite.exec(`RELEASE ${name}`)
      throw err
    }
  }

  private statement(sql: string): Database.Statement {
    let s = this.statements.get(sql)
    if (s === undefined) {
      s = this.sqlite.prepare(sql)
      this.statements.set(sql, s)
    }
    return s
  }
}

/** better-sqlite3 takes `?` values as arguments and `@name` values as one object. */
const args = (params: Params): unknown[] => (Array.isArray(params) ? params : [params])
