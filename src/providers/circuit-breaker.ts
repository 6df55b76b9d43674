import type { Clock } from '../engine/clock.js'

export interface BreakerOptions {
  /** Consecutive failures that open the circuit. */
  failures: number
  /** How long an open circuit refuses calls before it lets one trial call through. */
  cooldownMs: number
}

/** 5 failures and 30 s: an outage then costs 5 timeouts, not one per check (config.ts defaults). */
export const DEFAULT_BREAKER: BreakerOptions = { failures: 5, cooldownMs: 30_000 }

/** A call the breaker let through; hand it back with its outcome. */
export interface BreakerTicket {
  readonly trial: boolean
}

const ORDINARY: BreakerTicket = { trial: false }

/**
 * A consecutive-failure circuit breaker, so an unreachable provider costs each caller nothing
 * instead of a full timeout. Closed: every call goes. Open: none goes until the cool-down ends.
 * Half-open: a single trial call goes (the others are refused while it runs); its success closes
 * the circuit, its failure opens it for another cool-down. Only the trial's own outcome decides
 * that: a call started earlier and ending meanwhile just counts.
 */
export class CircuitBreaker {
  private consecutive = 0
  private openedAt: number | undefined
  private trial: BreakerTicket | undefined

  private readonly options: BreakerOptions
  private readonly clock: Clock

  constructor(options: BreakerOptions, clock: Clock) {
    this.options = options
    this.clock = clock
  }

  /** A ticket when the call may go; otherwise why not, for the caller's fallback reason. */
  admit(): BreakerTicket | string {
    if (this.openedAt === undefined) return ORDINARY
    const left = this.openedAt + this.options.cooldownMs - this.clock()
    if (left <= 0 && this.trial === undefined) {
      this.trial = { trial: true }
      return this.trial
    }
    const retry = left > 0 ? `retrying in ${Math.ceil(left / 1000)} s` : 'a trial request is under way'
    return `embeddings provider unavailable (circuit open after ${this.options.failures} consecutive failures), ${retry}`
  }

  /** Any success shows the provider is up: the circuit closes. */
  succeeded(_ticket: BreakerTicket): void {
    this.consecutive = 0
    this.openedAt = undefined
    this.trial = undefined
  }

  failed(ticket: BreakerTicket): void {
    this.consecutive++
    if (ticket === this.trial) {
      // The trial failed: open again for a new cool-down.
      this.openedAt = this.clock()
      this.trial = undefined
    } else if (this.openedAt === undefined && this.consecutive >= this.options.failures) {
      this.openedAt = this.clock()
    }
  }
}
