import { AsyncLocalStorage } from 'node:async_hooks'
import type pg from 'pg'
import type { Params, SqlDatabase } from './database.js'
import { connectionUnusable } from './faults.js'

/** A checked-out client whose connection drops emits 'error' as well as failing its statement: unheard, the event would end the process. */
const ignore = (): void => {}

/**
 * Statements on a PostgreSQL pool, inside the caller's transaction when there is one. A
 * transaction holds one pooled connection for its duration; the statements of the async work it
 * runs find it through AsyncLocalStorage, so repositories take no connection argument and the
 * same repository call runs inside or outside a unit of work. Transactions nest as savepoints.
 *
 * SQL is written once for both dialects where it can be: `?` placeholders (positional) or `@name`
 * (from an object), as better-sqlite3 takes them, become `$1…$n` here, translated once per text.
 */
export class PgDatabase implements SqlDatabase {
  readonly dialect = 'postgres'
  readonly pool: pg.Pool
  private readonly current = new AsyncLocalStorage<{ client: pg.PoolClient; depth: number }>()
  private readonly translated = new Map<string, Translated & { name: string }>()

  constructor(pool: pg.Pool) {
    this.pool = pool
  }

  /** True inside `transaction`'s work. */
  get inTransaction(): boolean {
    return this.current.getStore() !== undefined
  }

  async all<R>(sql: string, params: Params = []): Promise<R[]> {
    return (await this.query(sql, params)).rows as R[]
  }

  async get<R>(sql: string, params: Params = []): Promise<R | undefined> {
    return (await this.all<R>(sql, params))[0]
  }

  /** The number of rows the statement changed. */
  async run(sql: string, params: Params = []): Promise<number> {
    return (await this.query(sql, params)).rowCount ?? 0
  }

  /** On the transaction's connection when inside one, else on any of the pool's. */
  private query(sql: string, params: Params): Promise<pg.QueryResult> {
    return (this.current.getStore()?.client ?? this.pool).query(this.bind(sql, params))
  }

  /** A transaction resolves after its COMMIT: nothing is pending beyond it. */
  committed(): Promise<void> {
    return Promise.resolve()
  }

  /** Nothing commits after its transaction resolved, so nothing rolls back later. */
  onRollback(): void {}

  close(): Promise<void> {
    return this.pool.end()
  }

  /** Runs `work` in a transaction (a savepoint of the open one when nested): all of it commits or none. */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    const open = this.current.getStore()
    if (open !== undefined) {
      const name = `sp${open.depth + 1}`
      await open.client.query(`SAVEPOINT ${name}`)
      try {
        const result = await this.current.run({ client: open.client, depth: open.depth + 1 }, work)
        await open.client.query(`RELEASE SAVEPOINT ${name}`)
        return result
      } catch (err) {
        await open.client.query(`ROLLBACK TO SAVEPOINT ${name}`)
        throw err
      }
    }
    const client = await this.pool.connect()
    client.on('error', ignore)
    let broken: Error | undefined
    try {
      await client.query('BEGIN')
      const result = await this.current.run({ client, depth: 0 }, work)
      await client.query('COMMIT')
      return result
    } catch (err) {
      // A lost connection, or one whose statement the client gave up on (the server may still be
      // running it, and a ROLLBACK would only queue behind it), is dropped: the server rolls back
      // the transaction of a connection that ends.
      if (connectionUnusable(err)) broken = err as Error
      else {
        try {
          await client.query('ROLLBACK')
        } catch (rollbackErr) {
          // The connection itself failed: do not hand it back to the pool.
          broken = rollbackErr as Error
        }
      }
      throw err
    } finally {
      client.off('error', ignore)
      client.release(broken)
    }
  }

  /**
   * A named query: each connection prepares a text once and then only binds values, sparing the
   * server a parse and plan per statement (the texts are the repositories' constants: few).
   */
  private bind(sql: string, params: Params): pg.QueryConfig {
    let t = this.translated.get(sql)
    if (t === undefined) {
      t = { ...translate(sql), name: `gk${this.translated.size}` }
      this.translated.set(sql, t)
    }
    const values = Array.isArray(params) ? params : t.names.map((n) => (params as Record<string, unknown>)[n])
    return { name: t.name, text: t.text, values }
  }
}

interface Translated {
  text: string
  /** For `@name` placeholders: the parameter name of `$1`, `$2`, … */
  names: string[]
}

/**
 * `?` → `$1…$n` in order; `@name` → one `$k` per distinct name. Quoted strings and identifiers are
 * left alone, so a `?` or `@` inside a literal is not taken for a placeholder.
 */
export function translate(sql: string): Translated {
  const names: string[] = []
  let positional = 0
  let out = ''
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1)
      const stop = end < 0 ? sql.length : end + 1
      out += sql.slice(i, stop)
      i = stop - 1
    } else if (c === '?') {
      out += `$${++positional}`
    } else if (c === '@' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))![0]
      let k = names.indexOf(name)
      if (k < 0) k = names.push(name) - 1
      out += `$${k + 1}`
      i += name.length
    } else {
      out += c
    }
  }
  if (positional > 0 && names.length > 0) throw new Error(`Mixed ? and @name placeholders in: ${sql}`)
  return { text: out, names }
}
