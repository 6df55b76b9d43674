import { hex14, hexValue } from '../drift/step-alignment.js'

/**
 * The last `max` distinct step states (`stateHash`'s 14 hex digits) and how often each was seen,
 * oldest first. Kept as numbers in typed arrays: at the tracker's cap of 200 states, a `Map` of
 * the hash strings held ~18.6 KB of heap a session, these ~3.1 KB.
 */
export class StateCounts {
  private readonly max: number
  /** The first 8 hex digits of each hash. */
  private high = new Uint32Array(16)
  /** The last 6. */
  private low = new Uint32Array(16)
  private counts = new Uint32Array(16)
  private size = 0

  constructor(max: number) {
    this.max = max
  }

  static fromJSON(entries: readonly (readonly [string, number])[], max: number): StateCounts {
    const states = new StateCounts(max)
    states.resize(Math.min(max, Math.max(16, entries.length)))
    for (let i = 0; i < entries.length; i++) {
      const [hash, count] = entries[i]!
      states.add(hexValue(hash, 0, 8), hexValue(hash, 8, 14), count)
    }
    return states
  }

  /** One more sighting of `hash`: how many there have been, counting this one. */
  see(hash: string): number {
    const high = hexValue(hash, 0, 8)
    const low = hexValue(hash, 8, 14)
    for (let i = 0; i < this.size; i++) {
      if (this.high[i] === high && this.low[i] === low) {
        this.counts[i] = this.counts[i]! + 1
        return this.counts[i]!
      }
    }
    this.add(high, low, 1)
    return 1
  }

  clear(): void {
    this.size = 0
  }

  /** `[hash, sightings]`, oldest first: the snapshot's `state_hashes`. */
  toJSON(): [string, number][] {
    const out: [string, number][] = []
    for (let i = 0; i < this.size; i++) {
      // The last 6 digits are the top 24 bits of hex14's second word.
      out.push([hex14(this.high[i]!, this.low[i]! << 8), this.counts[i]!])
    }
    return out
  }

  /** Appends a state not held yet, forgetting the oldest when full. */
  private add(high: number, low: number, count: number): void {
    if (this.size === this.max) {
      this.high.copyWithin(0, 1, this.size)
      this.low.copyWithin(0, 1, this.size)
      this.counts.copyWithin(0, 1, this.size)
      this.size--
    }
    if (this.size === this.high.length) this.resize(Math.min(this.high.length * 2, this.max))
    this.high[this.size] = high
    this.low[this.size] = low
    this.counts[this.size] = count
    this.size++
  }

  private resize(length: number): void {
    const resized = (from: Uint32Array) => {
      const to = new Uint32Array(length)
      to.set(from.subarray(0, this.size))
      return to
    }
    this.high = resized(this.high)
    this.low = resized(this.low)
    this.counts = resized(this.counts)
  }
}
