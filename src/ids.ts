import { randomBytes } from 'node:crypto'

/** Id prefixes: opaque strings that say what they name. */
export type IdPrefix = 'agt' | 'key' | 'ses' | 'rem' | 'whk' | 'msg' | 'dlv' | 'evt'

/** The 64 url-safe characters in ASCII order, so a higher suffix value is a later string. */
const DIGITS = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz'
const SUFFIX_LENGTH = 16

let lastMs = -1
/** The previous id's suffix, one base-64 digit (0–63) per character. */
const last = new Uint8Array(SUFFIX_LENGTH)

/**
 * `<prefix>_<time><suffix>`: 9 base36 characters of creation time, then 16 url-safe characters
 * (96 bits), so ids sort by creation, which keeps cursor pagination a plain `id > ?`. The suffix
 * is random, except within one millisecond, where it counts up from the previous id's: ids made
 * in the same millisecond (a burst of creates) still sort in the order they were made. Its first
 * digit starts below 32, so the count never wraps.
 */
export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  if (nowMs === lastMs) {
    let i = SUFFIX_LENGTH - 1
    while (last[i] === 63) last[i--] = 0
    last[i] = last[i]! + 1
  } else {
    lastMs = nowMs
    const bytes = randomBytes(SUFFIX_LENGTH)
    for (let i = 0; i < SUFFIX_LENGTH; i++) last[i] = bytes[i]! & 63
    last[0] = bytes[0]! & 31
  }
  let suffix = ''
  for (const d of last) suffix += DIGITS[d]
  return `${prefix}_${nowMs.toString(36).padStart(9, '0')}${suffix}`
}
