import type Database from 'better-sqlite3'

/**
 * A prepared statement compiled on first use. Services are built with the app, which may come
 * up before migrations ran (readiness reports that); preparing then would fail on missing tables.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function lazyPrepare<S extends Database.Statement<any, any> = Database.Statement>(sqlite: Database.Database, sql: string): S {
  let stmt: S | undefined
  const real = (): S => (stmt ??= sqlite.prepare(sql) as unknown as S)
  return new Proxy({} as S, {
    get(_target, prop) {
      const s = real()
      const value: unknown = Reflect.get(s, prop, s)
      return typeof value === 'function' ? value.bind(s) : value
    },
  })
}

/**
 * Statements that module-level functions (called with a connection inside the caller's
 * transaction) prepare once per connection rather than on every call.
 */
export function perConnection<T>(build: (sqlite: Database.Database) => T): (sqlite: Database.Database) => T {
  const cache = new WeakMap<Database.Database, T>()
  return (sqlite) => {
    let s = cache.get(sqlite)
    if (s === undefined) {
      s = build(sqlite)
      cache.set(sqlite, s)
    }
    return s
  }
}
