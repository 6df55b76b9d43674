import { randomBytes } from 'node:crypto'

/** Id prefixes of API.md: opaque strings that say what they name. */
export type IdPrefix = 'agt' | 'key' | 'ses' | 'rem' | 'whk' | 'msg' | 'dlv' | 'evt'

/**
 * `<prefix>_<time><random>`: 9 base36 characters of creation time (so ids sort by creation, which
 * keeps cursor pagination a plain `id > ?`) followed by 16 url-safe random characters (96 bits).
 */
export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  return `${prefix}_${nowMs.toString(36).padStart(9, '0')}${randomBytes(12).toString('base64url')}`
}
