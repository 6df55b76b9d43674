import { AsyncLocalStorage } from 'node:async_hooks'
import type Database from 'better-sqlite3'
import { preparer, type Stmt } from './lazy-statement.js'
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
 */
export class SqliteDatabase implements SqlDatabase {
  readonly sqlite: Database.Database
  private readonly prepare: ReturnType<typeof preparer>
  private readonly statements = new Map<string, Stmt>()
  private readonly current = new AsyncLocalStorage<{ depth: number }>()
  /** Settles when the last queued top-level transaction has finished. */
  private tail: Promise<unknown> = Promise.resolve()
  private open = 0

  constructor(sqlite: Database.Database) {
    this.sqlite = sqlite
    this.prepare = preparer(sqlite)
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
    if (this.open > 0 && !this.inTransaction) return this.transaction(() => this.run(sql, params))
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

  private statement(sql: string): Stmt {
    let s = this.statements.get(sql)
    if (s === undefined) {
      s = this.prepare(sql)
      this.statements.set(sql, s)
    }
    return s
  }
}

/** better-sqlite3 takes `?` values as arguments and `@name` values as one object. */
const args = (params: Params): unknown[] => (Array.isArray(params) ? params : [params])
