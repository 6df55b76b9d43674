/** Milliseconds since the epoch. The engine never reads the wall clock itself: callers pass one. */
export type Clock = () => number

/** The default for library users who do not inject a clock. */
export const wallClock: Clock = () => Date.now()

/** ISO-8601 UTC string of a clock reading, the form every timestamp takes in results. */
export function isoAt(ms: number): string {
  // One step reads the clock several times within the same millisecond; toISOString costs ~1.5 µs.
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString()
    lastMs = ms
  }
  return lastIso
}

let lastMs = Number.NaN
let lastIso = ''
