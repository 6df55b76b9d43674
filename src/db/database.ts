/** Values for `?` placeholders in order, or for `@name` placeholders by name. */
export type Params = unknown[] | Record<string, unknown>

/**
 * What a repository needs of a database, the same on both dialects: statements (`?` or `@name`
 * placeholders) run inside the caller's transaction when there is one, and transactions that nest
 * as savepoints. SqliteDatabase and PgDatabase implement it.
 */
export interface SqlDatabase {
  readonly dialect: 'sqlite' | 'postgres'
  readonly inTransaction: boolean
  all<R>(sql: string, params?: Params): Promise<R[]>
  get<R>(sql: string, params?: Params): Promise<R | undefined>
  /** The number of rows the statement changed. */
  run(sql: string, params?: Params): Promise<number>
  transaction<T>(work: () => Promise<T>): Promise<T>
  /**
   * Resolves once every transaction that has resolved so far is durable. SQLite's group commit
   * resolves a transaction when its savepoint is released and commits the batch after the turn;
   * PostgreSQL resolves a transaction after its COMMIT, so there it resolves at once.
   */
  committed(): Promise<void>
  /** `fn` runs if writes whose transaction already resolved are rolled back after all (a failed group commit). */
  onRollback(fn: () => void): void
  close(): Promise<void>
}
