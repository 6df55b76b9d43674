/**
 * The fast path of `lexicalSimilarity`. A goal is compiled once into two open-addressing tables
 * that hold its permanent entries (stop words and goal tokens; goal trigrams) and double as the
 * scratch space for an action's entries, which are stamped with a per-call generation: starting
 * a call is one increment, nothing is cleared or allocated, and each action token or trigram
 * costs one probe sequence. Tokens are matched by hash and then verified character by character,
 * so results are exact: equal to the Set-based definition in `text.ts`, never approximate.
 *
 * Why a stale slot may be reused: an entry of the current call sits at the first slot of its
 * probe chain that was free or stale when it was inserted, and slots only ever turn from stale to
 * current within a call; so a probe that reaches a stale or empty slot has passed every place
 * the key could be. Permanent entries are never stale.
 */
import { STOP_WORDS } from './stop-words.js'

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193
const GOLDEN = 0x9e3779b1
const STOP = 1
const GOAL = 2

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

function sameRange(word: string, s: string, start: number, len: number): boolean {
  if (word.length !== len) return false
  for (let k = 0; k < len; k++) if (word.charCodeAt(k) !== s.charCodeAt(start + k)) return false
  return true
}

function sameSpan(s: string, a: number, b: number, len: number): boolean {
  for (let k = 0; k < len; k++) if (s.charCodeAt(a + k) !== s.charCodeAt(b + k)) return false
  return true
}

/** A 48-bit packed trigram (see `trigramSet`) repacked into 30 bits, or -1 if a code is ≥ 1024. */
function repack(packed: number): number {
  const a = Math.floor(packed / 4294967296)
  const rest = packed - a * 4294967296
  const b = Math.floor(rest / 65536)
  const c = rest % 65536
  return a < 1024 && b < 1024 && c < 1024 ? (a << 20) | (b << 10) | c : -1
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

/** The goal side, compiled once from a fingerprint's token and trigram sets. */
export class GoalIndex {
  /** Every goal trigram, 48-bit packed: the exact path for texts with char codes ≥ 1024. */
  readonly trigrams: ReadonlySet<number>
  private readonly permanentWords: Map<string, number>
  private readonly permanentTrigrams: number[]
  private generation = 0
  // Word table: permanent words (flags STOP / GOAL) and the current call's tokens.
  private wShift = 32
  private wMask = 0
  private wWords: (string | undefined)[] = []
  private wFlags = new Uint8Array(0)
  private wHashes = new Int32Array(0)
  private wStamps = new Uint32Array(0)
  private wStarts = new Int32Array(0)
  private wLens = new Int32Array(0)
  // Trigram table: goal trigrams (permanent) and the current call's trigrams, 30-bit keys.
  private tShift = 32
  private tMask = 0
  private tKeys = new Int32Array(0)
  private tGoal = new Uint8Array(0)
  private tStamps = new Uint32Array(0)

  constructor(tokens: Iterable<string>, trigrams: ReadonlySet<number>) {
    this.trigrams = trigrams
    this.permanentWords = new Map()
    for (const w of STOP_WORDS) this.permanentWords.set(w, STOP)
    for (const w of tokens) this.permanentWords.set(w, (this.permanentWords.get(w) ?? 0) | GOAL)
    this.permanentTrigrams = []
    for (const t of trigrams) {
      const key = repack(t)
      if (key >= 0) this.permanentTrigrams.push(key)
    }
    this.build(64)
  }

  /** (Re)builds both tables for texts up to `n` characters, with only the permanent entries. */
  private build(n: number): void {
    // Distinct tokens of length ≥ 3 in n characters: at most (n + 1) / 4.
    const wCap = capacityFor(this.permanentWords.size + Math.ceil((n + 1) / 4) + 1)
    this.wShift = 32 - Math.log2(wCap)
    this.wMask = wCap - 1
    this.wWords = new Array<string | undefined>(wCap).fill(undefined)
    this.wFlags = new Uint8Array(wCap)
    this.wHashes = new Int32Array(wCap)
    this.wStamps = new Uint32Array(wCap)
    this.wStarts = new Int32Array(wCap)
    this.wLens = new Int32Array(wCap)
    for (const [w, flags] of this.permanentWords) {
      const h = hashString(w)
      let i = Math.imul(h, GOLDEN) >>> this.wShift
      while (this.wWords[i] !== undefined) i = (i + 1) & this.wMask
      this.wWords[i] = w
      this.wFlags[i] = flags
      this.wHashes[i] = h
    }
    const tCap = capacityFor(this.permanentTrigrams.length + n + 1)
    this.tShift = 32 - Math.log2(tCap)
    this.tMask = tCap - 1
    this.tKeys = new Int32Array(tCap)
    this.tGoal = new Uint8Array(tCap)
    this.tStamps = new Uint32Array(tCap)
    for (const key of this.permanentTrigrams) {
      let i = Math.imul(key, GOLDEN) >>> this.tShift
      while (this.tGoal[i] === 1 && this.tKeys[i] !== key) i = (i + 1) & this.tMask
      this.tKeys[i] = key
      this.tGoal[i] = 1
    }
    this.capacityChars = n
    this.generation = 0
  }

  private capacityChars = 0

  private nextGeneration(n: number): number {
    if (n > this.capacityChars) this.build(Math.max(n, 2 * this.capacityChars))
    if (this.generation === 0xffffffff) this.build(this.capacityChars)
    return ++this.generation
  }

  /**
   * Classifies the token s[start, start+len) (hash h) with one probe sequence and records it:
   * 0 = stop word or already seen in this call, 1 = new content token, 3 = new goal token.
   */
  private recordToken(s: string, start: number, len: number, h: number, gen: number): number {
    const { wMask, wWords, wFlags, wHashes, wStamps, wStarts, wLens } = this
    for (let slot = Math.imul(h, GOLDEN) >>> this.wShift; ; slot = (slot + 1) & wMask) {
      const word = wWords[slot]
      if (word !== undefined) {
        if (wHashes[slot] !== h || !sameRange(word, s, start, len)) continue
        if ((wFlags[slot]! & STOP) !== 0 || wStamps[slot] === gen) return 0
        wStamps[slot] = gen
        return 3
      }
      if (wStamps[slot] !== gen) {
        wStamps[slot] = gen
        wHashes[slot] = h
        wStarts[slot] = start
        wLens[slot] = len
        return 1
      }
      if (wHashes[slot] === h && wLens[slot] === len && sameSpan(s, wStarts[slot]!, start, len)) return 0
    }
  }

  /** Scans `text` in one pass over its char codes (tokens and trigrams together) into `out`. */
  count(text: string, out: LexicalCounts): LexicalCounts {
    const s = text.toLowerCase()
    const n = s.length
    const gen = this.nextGeneration(n)
    const { tShift, tMask, tKeys, tGoal, tStamps } = this
    let tokens = 0
    let tokenHits = 0
    let r = 0
    let trigrams = 0
    let trigramHits = 0
    let packable = true // trigrams stay on the 30-bit path while every code is < 1024
    let c0 = 0
    let c1 = 0
    let start = -1
    let h = 0
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i)
      if (start >= 0) {
        if (isTokenPart(c)) h = Math.imul(h ^ c, FNV_PRIME)
        else {
          if (i - start > 2) {
            r = this.recordToken(s, start, i - start, h, gen)
            tokens += r & 1
            tokenHits += r >> 1
          }
          start = -1
        }
      } else if (isTokenStart(c)) {
        start = i
        h = Math.imul(FNV_OFFSET ^ c, FNV_PRIME)
      }
      if (!packable) continue
      if (c >= 1024) {
        packable = false
        continue
      }
      if (i >= 2) {
        const key = (c0 << 20) | (c1 << 10) | c
        for (let slot = Math.imul(key, GOLDEN) >>> tShift; ; slot = (slot + 1) & tMask) {
          if (tGoal[slot] === 1) {
            if (tKeys[slot] !== key) continue
            if (tStamps[slot] !== gen) {
              tStamps[slot] = gen
              trigrams++
              trigramHits++
            }
            break
          }
          if (tStamps[slot] !== gen) {
            tStamps[slot] = gen
            tKeys[slot] = key
            trigrams++
            break
          }
          if (tKeys[slot] === key) break
        }
      }
      c0 = c1
      c1 = c
    }
    if (start >= 0 && n - start > 2) {
      r = this.recordToken(s, start, n - start, h, gen)
      tokens += r & 1
      tokenHits += r >> 1
    }
    out.tokens = tokens
    out.tokenHits = tokenHits
    out.trigrams = trigrams
    out.trigramHits = trigramHits
    if (!packable) this.countTrigramsExact(s, out)
    return out
  }

  /** The exact path for any text: 48-bit packed trigrams in a Set, as `trigramSet` does. */
  private countTrigramsExact(s: string, out: LexicalCounts): void {
    const seen = new Set<number>()
    let hits = 0
    for (let i = 0; i + 2 < s.length; i++) {
      const t = s.charCodeAt(i) * 4294967296 + s.charCodeAt(i + 1) * 65536 + s.charCodeAt(i + 2)
      if (seen.has(t)) continue
      seen.add(t)
      if (this.trigrams.has(t)) hits++
    }
    out.trigrams = seen.size
    out.trigramHits = hits
  }
}
