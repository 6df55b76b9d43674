/** Values for `?` placeholders in order, or for `@name` placeholders by name. */
export type Params = unknown[] | Record<string, unknown>

/**
 * What a repository needs of a database, the same on both dialects: statements (`?` or `@name`
 * placeholders) run inside the caller's transaction when there is one, and transactions that nest
 * as savepoints. SqliteDatabase and PgDatabase implement it.
 */
export interface SqlDatabase {
  readonly inTransaction: boolean
  all<R>(sql: string, params?: Params): Promise<R[]>
  get<R>(sql: string, params?: Params): Promise<R | undefined>
  /** The number of rows the statement changed. */
  run(sql: string, params?: Params): Promise<number>
  transaction<T>(work: () => Promise<T>): Promise<T>
}
