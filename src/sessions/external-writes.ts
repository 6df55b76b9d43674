/**
 * Lets cached sessions vouch for their own key (agent, status, version) instead of reading the
 * row on every request. This process's writes keep a cached key current; a write by any other
 * connection (another process on the same file) moves SQLite's `PRAGMA data_version`, which is
 * read at most once per event-loop turn: when it has moved, the epoch advances and every cached
 * key is read from its row once more. A key that goes stale within a turn is still safe: every
 * session write carries its version check, so it ends in a retryable 409, never a lost update.
 */
import type Database from 'better-sqlite3'

export class ExternalWrites {
  private readonly dataVersion: Database.Statement<[], number>
  private seen: number | undefined
  private checkedThisTurn = false
  private epoch = 0

  constructor(db: Database.Database) {
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck()
  }

  /** Keys validated under an older epoch must be read again. */
  current(): number {
    if (this.checkedThisTurn) return this.epoch
    this.checkedThisTurn = true
    setImmediate(() => { this.checkedThisTurn = false })
    const version = this.dataVersion.get()!
    if (version !== this.seen) {
      this.seen = version
      this.epoch++
    }
    return this.epoch
  }
}
