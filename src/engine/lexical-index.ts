/**
 * The fast path of `lexicalSimilarity`. The goal side is compiled once into open-addressing
 * tables; the action side is scanned in one pass over char codes with reusable scratch tables
 * (generation-stamped, so they are never cleared and nothing is allocated per call). Token
 * matches are hashed first and verified character by character, so results are exact: equal to
 * the Set-based definition in `text.ts`, never approximate.
 */
import { STOP_WORDS } from './stop-words.js'

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193
const GOLDEN = 0x9e3779b1

function hashString(s: string): number {
  let h = FNV_OFFSET
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME)
  return h
}

/** Smallest power of two ≥ 2n (load ≤ 0.5 keeps probe chains short), at least 16. */
function capacityFor(n: number): number {
  let cap = 16
  while (cap < 2 * n) cap *= 2
  return cap
}

/** Slot of hash `h` in a table of `cap` = 2^bits slots (Fibonacci hashing spreads FNV's low bits). */
function slotOf(h: number, shift: number): number {
  return Math.imul(h, GOLDEN) >>> shift
}

function shiftFor(cap: number): number {
  return 32 - Math.log2(cap)
}

function sameRange(a: string, s: string, start: number, len: number): boolean {
  if (a.length !== len) return false
  for (let k = 0; k < len; k++) if (a.charCodeAt(k) !== s.charCodeAt(start + k)) return false
  return true
}

/** Flags of a word in a goal's word table. */
const STOP = 1
const GOAL = 2

/**
 * An immutable map from strings to flags that answers "what is s[start, start+len)?" without
 * slicing. One table holds the stop words and the goal tokens, so each action token costs one probe.
 */
class RangeWordTable {
  private readonly shift: number
  private readonly mask: number
  private readonly hashes: Int32Array
  private readonly flags: Uint8Array
  private readonly words: (string | undefined)[]

  constructor(entries: ReadonlyMap<string, number>) {
    const cap = capacityFor(entries.size)
    this.shift = shiftFor(cap)
    this.mask = cap - 1
    this.hashes = new Int32Array(cap)
    this.flags = new Uint8Array(cap)
    this.words = new Array<string | undefined>(cap).fill(undefined)
    for (const [w, flag] of entries) {
      const h = hashString(w)
      let i = slotOf(h, this.shift)
      while (this.words[i] !== undefined) i = (i + 1) & this.mask
      this.words[i] = w
      this.hashes[i] = h
      this.flags[i] = flag
    }
  }

  /** Flags of the word s[start, start+len) whose FNV-1a hash is `h`; 0 when absent. */
  lookup(s: string, start: number, len: number, h: number): number {
    for (let i = slotOf(h, this.shift); ; i = (i + 1) & this.mask) {
      const w = this.words[i]
      if (w === undefined) return 0
      if (this.hashes[i] === h && sameRange(w, s, start, len)) return this.flags[i]!
    }
  }
}

/** A 48-bit packed trigram (see `trigramSet`) repacked into 30 bits, or -1 if a code is ≥ 1024. */
function repack(packed: number): number {
  const a = Math.floor(packed / 4294967296)
  const rest = packed - a * 4294967296
  const b = Math.floor(rest / 65536)
  const c = rest % 65536
  return a < 1024 && b < 1024 && c < 1024 ? (a << 20) | (b << 10) | c : -1
}

/** The goal side, compiled once from a fingerprint's token and trigram sets. */
export class GoalIndex {
  /** Stop words (flag STOP) and goal tokens (flag GOAL). */
  readonly words: RangeWordTable
  /** Every goal trigram, 48-bit packed: the exact slow path for texts with char codes ≥ 1024. */
  readonly trigrams: ReadonlySet<number>
  /** Goal trigrams whose codes are all < 1024, packed into 30 bits, stored +1 (0 = empty). */
  private readonly triKeys: Int32Array
  private readonly triShift: number
  private readonly triMask: number

  constructor(tokens: Iterable<string>, trigrams: ReadonlySet<number>) {
    const entries = new Map<string, number>()
    for (const w of STOP_WORDS) entries.set(w, STOP)
    for (const w of tokens) entries.set(w, (entries.get(w) ?? 0) | GOAL)
    this.words = new RangeWordTable(entries)
    this.trigrams = trigrams
    const cap = capacityFor(trigrams.size)
    this.triKeys = new Int32Array(cap)
    this.triShift = shiftFor(cap)
    this.triMask = cap - 1
    for (const t of trigrams) {
      const key = repack(t)
      if (key < 0) continue
      let i = slotOf(key, this.triShift)
      while (this.triKeys[i] !== 0 && this.triKeys[i] !== key + 1) i = (i + 1) & this.triMask
      this.triKeys[i] = key + 1
    }
  }

  hasTrigram(key: number): boolean {
    const stored = key + 1
    for (let i = slotOf(key, this.triShift); ; i = (i + 1) & this.triMask) {
      const k = this.triKeys[i]!
      if (k === 0) return false
      if (k === stored) return true
    }
  }
}

// Scratch tables for the action side, reused across calls. A slot is live only when its stamp
// equals the current generation, so starting a new call is one increment, not a clear.
let scratchCap = 0
let scratchShift = 32
let scratchMask = 0
let stamps = new Uint32Array(0)
let triKeys = new Int32Array(0)
let tokStamps = new Uint32Array(0)
let tokHashes = new Int32Array(0)
let tokStarts = new Int32Array(0)
let tokLens = new Int32Array(0)
let generation = 0

function prepareScratch(n: number): number {
  if (2 * n > scratchCap) {
    scratchCap = capacityFor(n)
    scratchShift = shiftFor(scratchCap)
    scratchMask = scratchCap - 1
    stamps = new Uint32Array(scratchCap)
    triKeys = new Int32Array(scratchCap)
    tokStamps = new Uint32Array(scratchCap)
    tokHashes = new Int32Array(scratchCap)
    tokStarts = new Int32Array(scratchCap)
    tokLens = new Int32Array(scratchCap)
    generation = 0
  }
  if (generation === 0xffffffff) {
    stamps.fill(0)
    tokStamps.fill(0)
    generation = 0
  }
  return ++generation
}

function isTokenStart(c: number): boolean {
  return c === 95 || (c >= 97 && c <= 122)
}

function isTokenPart(c: number): boolean {
  return c === 95 || (c >= 97 && c <= 122) || (c >= 48 && c <= 57)
}

/** Counts of one text against a goal: distinct content tokens / trigrams and how many the goal has. */
export interface LexicalCounts {
  tokens: number
  tokenHits: number
  trigrams: number
  trigramHits: number
}

/**
 * Scans `text` against `goal` in one pass over its char codes (tokens and trigrams together);
 * writes into `out` (reused by the caller) and returns it.
 */
export function countAgainst(goal: GoalIndex, text: string, out: LexicalCounts): LexicalCounts {
  const s = text.toLowerCase()
  const n = s.length
  const gen = prepareScratch(n)
  const shift = scratchShift
  const mask = scratchMask
  const words = goal.words
  const tStamps = tokStamps
  const tHashes = tokHashes
  const tStarts = tokStarts
  const tLens = tokLens
  const st = stamps
  const keys = triKeys
  let tokens = 0
  let tokenHits = 0
  let trigrams = 0
  let trigramHits = 0
  // Trigrams stay on the packed fast path while every code is < 1024.
  let packable = true
  let c0 = 0
  let c1 = 0
  let start = -1
  let h = 0
  for (let i = 0; i <= n; i++) {
    const c = i < n ? s.charCodeAt(i) : 32
    if (start >= 0 && isTokenPart(c)) {
      h = Math.imul(h ^ c, FNV_PRIME)
    } else {
      if (start >= 0) {
        // A token s[start, i) just ended.
        const len = i - start
        const flags = len > 2 ? words.lookup(s, start, len, h) : STOP
        if ((flags & STOP) === 0) {
          for (let slot = slotOf(h, shift); ; slot = (slot + 1) & mask) {
            if (tStamps[slot] !== gen) {
              tStamps[slot] = gen
              tHashes[slot] = h
              tStarts[slot] = start
              tLens[slot] = len
              tokens++
              if (flags === GOAL) tokenHits++
              break
            }
            if (tHashes[slot] === h && tLens[slot] === len && sameSpan(s, tStarts[slot]!, start, len)) break
          }
        }
        start = -1
      }
      if (isTokenStart(c)) {
        start = i
        h = Math.imul(FNV_OFFSET ^ c, FNV_PRIME)
      }
    }
    if (i >= n || !packable) continue
    if (c >= 1024) {
      packable = false
      continue
    }
    if (i >= 2) {
      const key = (c0 << 20) | (c1 << 10) | c
      for (let slot = slotOf(key, shift); ; slot = (slot + 1) & mask) {
        if (st[slot] !== gen) {
          st[slot] = gen
          keys[slot] = key
          trigrams++
          if (goal.hasTrigram(key)) trigramHits++
          break
        }
        if (keys[slot] === key) break
      }
    }
    c0 = c1
    c1 = c
  }
  out.tokens = tokens
  out.tokenHits = tokenHits
  out.trigrams = trigrams
  out.trigramHits = trigramHits
  if (!packable) countTrigramsExact(goal, s, out)
  return out
}

function sameSpan(s: string, a: number, b: number, len: number): boolean {
  for (let k = 0; k < len; k++) if (s.charCodeAt(a + k) !== s.charCodeAt(b + k)) return false
  return true
}

/** The exact path for any text: 48-bit packed trigrams in a Set, as `trigramSet` does. */
function countTrigramsExact(goal: GoalIndex, s: string, out: LexicalCounts): void {
  const seen = new Set<number>()
  let hits = 0
  for (let i = 0; i + 2 < s.length; i++) {
    const t = s.charCodeAt(i) * 4294967296 + s.charCodeAt(i + 1) * 65536 + s.charCodeAt(i + 2)
    if (seen.has(t)) continue
    seen.add(t)
    if (goal.trigrams.has(t)) hits++
  }
  out.trigrams = seen.size
  out.trigramHits = hits
}
