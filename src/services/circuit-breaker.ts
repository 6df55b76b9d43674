import type { Clock } from '../engine/clock.js'

export interface BreakerOptions {
  /** Consecutive failures that open the circuit. */
  failures: number
  /** How long an open circuit refuses calls before it lets one trial call through. */
  cooldownMs: number
}

/**
 * A consecutive-failure circuit breaker, so an unreachable provider costs each caller nothing
 * instead of a full timeout. Closed: every call goes. Open: none goes until the cool-down ends.
 * Half-open: a single trial call goes (the others are refused while it runs); its success closes
 * the circuit, its failure opens it for another cool-down.
 */
export class CircuitBreaker {
  private consecutive = 0
  private openedAt: number | undefined
  private trial = false

  private readonly options: BreakerOptions
  private readonly clock: Clock

  constructor(options: BreakerOptions, clock: Clock) {
    this.options = options
    this.clock = clock
  }

  /** Undefined when the call may go; otherwise why not, for the caller's fallback reason. */
  refusal(): string | undefined {
    if (this.openedAt === undefined) return undefined
    const left = this.openedAt + this.options.cooldownMs - this.clock()
    if (left <= 0 && !this.trial) {
      this.trial = true
      return undefined
    }
    const retry = left > 0 ? `retrying in ${Math.ceil(left / 1000)} s` : 'a trial request is under way'
    return `embeddings provider unavailable (circuit open after ${this.options.failures} consecutive failures), ${retry}`
  }

  succeeded(): void {
    this.consecutive = 0
    this.openedAt = undefined
    this.trial = false
  }

  failed(): void {
    this.consecutive++
    // A failed trial re-opens at once. A call started before the circuit opened and failing
    // after does not lengthen the cool-down.
    if (this.trial || (this.openedAt === undefined && this.consecutive >= this.options.failures)) this.openedAt = this.clock()
    this.trial = false
  }
}
