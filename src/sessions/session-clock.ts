import type { Clock } from '../engine/clock.js'

/**
 * A session's clock: the service clock, except while an operation runs, when it is pinned to the
 * one reading the operation is recorded at (live), or was recorded at (replay). Pinning live too
 * means an op that reads the clock twice sees one instant, which the replay can reproduce.
 */
export class SessionClock {
  private pinnedAt: number | undefined
  readonly clock: Clock

  constructor(base: Clock) {
    this.clock = () => this.pinnedAt ?? base()
  }

  /** Runs `fn` with the clock reading `at`. */
  at<T>(at: number, fn: () => T): T {
    const outer = this.pinnedAt
    this.pinnedAt = at
    try {
      return fn()
    } finally {
      this.pinnedAt = outer
    }
  }
}
