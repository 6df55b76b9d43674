/**
 * One queue per key: `acquire` resolves once every earlier holder of the key has released it.
 * The session store takes it for a session id before the write's transaction (never inside one:
 * a holder may wait for a connection or SQLite's turn, so whoever holds one must not wait for the
 * lock) and lets go after that transaction settles.
 */
export class KeyedLock {
  /** Per key: settles when the last holder queued so far has released. */
  private readonly tails = new Map<string, Promise<void>>()

  async acquire(key: string): Promise<() => void> {
    const before = this.tails.get(key)
    let release!: () => void
    const mine = new Promise<void>((resolve) => (release = resolve))
    const tail = before === undefined ? mine : before.then(() => mine)
    this.tails.set(key, tail)
    if (before !== undefined) await before
    let released = false
    return () => {
      if (released) return
      released = true
      release()
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }
}
