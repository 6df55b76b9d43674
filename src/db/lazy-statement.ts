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


export type Stmt<P extends unknown[] = unknown[], R = unknown> = Database.Statement<P, R>

/** `lazyPrepare` bound to one connection: each repository's `prepare`. */
export function preparer(sqlite: Database.Database) {
  return <S extends Stmt<never[]> = Stmt>(sql: string): S => lazyPrepare<S>(sqlite, sql)
}
