/** Milliseconds since the epoch. The engine never reads the wall clock itself: callers pass one. */
export type Clock = () => number

/** The default for library users who do not inject a clock. */
export const wallClock: Clock = () => Date.now()

/** ISO-8601 UTC string of a clock reading, the form every timestamp takes in results. */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString()
}
