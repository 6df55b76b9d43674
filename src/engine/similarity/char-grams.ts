/**
 * Character n-grams (3–5 characters of `<word>`, the angle brackets marking its ends) for the
 * `enhanced` similarity: they let words that share a part meet where whole words don't
 * ("upgrade"/"upgrading", "FQ8APE"/"fq8ape," or a name inside an identifier).
 *
 * An n-gram's weight comes from the same general-corpus rank list as the word weights: each
 * listed word at rank r counts as Zipf frequency 10 / (r + 10), an n-gram's mass is the sum over
 * the words that contain it, and its weight is −ln(mass), floored at 0. So an n-gram found in a
 * single word weighs what that word weighs (ln(1 + r / 10)), one found in many common words
 * ("ing>") weighs nothing, and an unlisted one weighs as an unlisted word does.
 *
 * N-grams are hashed into 2^21 slots: a collision merges two masses, which only lowers a weight,
 * and the same text always gives the same result. Only the ~218,000 slots the listed words reach
 * are kept (sorted, with their weights: 1.7 MB, where a table of every slot took 8 MB); every other
 * slot weighs as an unlisted word. Word infos keep their n-grams' weights, so a check never
 * searches them.
 */

const MIN_N = 3
const MAX_N = 5
const TABLE_BITS = 21
const TABLE_MASK = (1 << TABLE_BITS) - 1
/** Divisor of the rank in a weight: words above roughly rank 10 are all "common". */
const RANK_SCALE = 10

// The slots the listed words reach, ascending, and their weights (float32, as built).
let listedSlots: Int32Array | undefined
let listedWeights: Float32Array | undefined
let unlistedWeight = 0
// The slots seen in the current text: an open-addressing set whose entries count only while stamped
// with the current pass, so a new text empties it in O(1). Sized to the texts (a few KB), where a
// mark per table slot cost 4 MB for the same answers.
let seenSlots = new Int32Array(1024)
let seenStamps = new Uint16Array(1024)
let seenCount = 0
let pass = 1

/** Calls `visit(slot)` for each 3–5-gram of `<word>` (repeats included). */
function forEachGram(word: string, visit: (slot: number) => void): void {
  const len = word.length + 2
  for (let i = 0; i + MIN_N <= len; i++) {
    let h = 0x811c9dc5
    for (let j = i; j < i + MAX_N && j < len; j++) {
      const c = j === 0 ? 60 : j === len - 1 ? 62 : word.charCodeAt(j - 1)
      h = Math.imul(h ^ c, 0x01000193)
      if (j - i + 1 >= MIN_N) visit((h ^ (h >>> TABLE_BITS)) & TABLE_MASK)
    }
  }
}

/** Fibonacci hashing: neighbouring slots land far apart in the small tables below. */
function spread(slot: number): number {
  return Math.imul(slot, 0x9e3779b1) >>> 0
}

/** A word's IDF-like weight from its general-corpus frequency rank (Zipf): ln(1 + rank / 10). */
export function rankWeight(rank: number): number {
  return Math.log(1 + rank / RANK_SCALE)
}

/** Builds the n-gram weights from the rank-ordered word list (once per process). */
export function buildGramWeights(words: readonly string[], unlistedRank: number): void {
  if (listedSlots !== undefined) return
  const mass = new Float32Array(TABLE_MASK + 1)
  let f = 0
  // Each word adds its Zipf frequency once to each of its distinct n-grams.
  const add = (slot: number): void => {
    if (firstSeen(slot)) mass[slot]! += f
  }
  for (let rank = 0; rank < words.length; rank++) {
    f = RANK_SCALE / (rank + RANK_SCALE)
    newPass()
    forEachGram(words[rank]!, add)
  }
  let listed = 0
  for (let i = 0; i < mass.length; i++) if (mass[i] !== 0) listed++
  listedSlots = new Int32Array(listed)
  listedWeights = new Float32Array(listed)
  for (let i = 0, k = 0; i < mass.length; i++) {
    if (mass[i] === 0) continue
    listedSlots[k] = i
    listedWeights[k++] = Math.max(0, -Math.log(mass[i]!))
  }
  unlistedWeight = Math.fround(rankWeight(unlistedRank))
}

/** The n-gram slots of a word, distinct, for caching with the word. */
export function gramSlots(word: string): Int32Array {
  const slots = new Set<number>()
  forEachGram(word, (slot) => slots.add(slot))
  return Int32Array.from(slots)
}

/** Weight of one n-gram slot (a binary search); the weights must have been built. */
export function gramWeight(slot: number): number {
  const slots = listedSlots!
  let lo = 0
  let hi = slots.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const s = slots[mid]!
    if (s === slot) return listedWeights![mid]!
    if (s < slot) lo = mid + 1
    else hi = mid - 1
  }
  return unlistedWeight
}

/**
 * A goal's n-grams as an open-addressing table (slot → weight): on the per-check path this is
 * several times faster than a `Map`.
 */
export class GramTable {
  private readonly keys: Int32Array
  private readonly values: Float64Array
  private readonly mask: number
  readonly norm2: number

  constructor(grams: ReadonlyMap<number, number>) {
    let size = 16
    while (size < grams.size * 4) size *= 2
    this.mask = size - 1
    this.keys = new Int32Array(size).fill(-1)
    this.values = new Float64Array(size)
    let norm2 = 0
    for (const [slot, w] of grams) {
      let i = spread(slot) & this.mask
      while (this.keys[i] !== -1) i = (i + 1) & this.mask
      this.keys[i] = slot
      this.values[i] = w
      norm2 += w * w
    }
    this.norm2 = norm2
  }

  /** The weight of `slot`, 0 when absent. */
  get(slot: number): number {
    for (let i = spread(slot) & this.mask; ; i = (i + 1) & this.mask) {
      const k = this.keys[i]!
      if (k === slot) return this.values[i]!
      if (k === -1) return 0
    }
  }
}

/** Starts a new text: every slot unseen again, in O(1). */
export function newPass(): void {
  seenCount = 0
  if (++pass === 0x10000) {
    seenStamps.fill(0)
    pass = 1
  }
}

/** True the first time `slot` is seen in the current pass. */
export function firstSeen(slot: number): boolean {
  const mask = seenSlots.length - 1
  let i = spread(slot) & mask
  for (; seenStamps[i] === pass; i = (i + 1) & mask) if (seenSlots[i] === slot) return false
  seenSlots[i] = slot
  seenStamps[i] = pass
  if (++seenCount * 2 > seenSlots.length) growSeen()
  return true
}

/** Doubles the seen set, keeping the current pass's slots; at most half full keeps probes short. */
function growSeen(): void {
  const slots = seenSlots
  const stamps = seenStamps
  seenSlots = new Int32Array(slots.length * 2)
  seenStamps = new Uint16Array(slots.length * 2)
  seenCount = 0
  for (let j = 0; j < slots.length; j++) if (stamps[j] === pass) firstSeen(slots[j]!)
}
