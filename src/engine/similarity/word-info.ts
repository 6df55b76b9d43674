/**
 * The word table of the `enhanced` similarity: each word's general-corpus weight, stem, n-gram
 * slots and whether the rank list lacks it, memoized per word.
 *
 * `resources/word-ranks.txt` lists the 100k most frequent words of the GloVe 6B vocabulary
 * (Wikipedia + Gigaword); by Zipf's law a word's rarity grows with its frequency rank:
 * weight = ln(1 + rank / 10)^0.3. Words missing from the list (identifiers, codes, rare names)
 * get the largest weight. The list is read once per process: on the first lookup, or at start
 * (`loadWordTable`).
 */
import { readFileSync } from 'node:fs'
import { stemmer } from 'stemmer'
import { STOP_WORDS } from './text.js'
import { buildGramWeights, gramSlots, gramWeight, rankWeight } from './char-grams.js'

/** Flattens the rank weight: common domain words ("cancel") tell tasks apart more than a general corpus says. */
const WEIGHT_POWER = 0.3

/**
 * The rank list kept compact: the file's text as one string and its words' offsets in alphabetical
 * order with their ranks (~1.6 MB, where a `Map` of the words held ~7.5 MB of heap). A look-up is a
 * binary search over the text; the callers memoize per word.
 */
class RankList {
  readonly size: number
  /** The list file's text: a word a line, in rank order. */
  private readonly text: string
  /** Where each word starts in `text`, in alphabetical order of the words. */
  private readonly starts: Int32Array
  /** The rank of the word at the same position of `starts`. */
  private readonly ranks: Int32Array

  constructor(text: string) {
    this.text = text
    const words = this.words()
    const startOf = new Int32Array(words.length)
    for (let rank = 1; rank < words.length; rank++) startOf[rank] = startOf[rank - 1]! + words[rank - 1]!.length + 1
    const order = Array.from(words.keys()).sort((a, b) => (words[a]! < words[b]! ? -1 : words[a]! > words[b]! ? 1 : 0))
    this.size = words.length
    this.starts = Int32Array.from(order, (rank) => startOf[rank]!)
    this.ranks = Int32Array.from(order)
  }

  /** The words in rank order (the list's lines). */
  words(): string[] {
    const lines = this.text.split('\n')
    if (lines.at(-1) === '') lines.pop()
    return lines
  }

  get(word: string): number | undefined {
    let lo = 0
    let hi = this.size - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const c = this.compare(word, this.starts[mid]!)
      if (c === 0) return this.ranks[mid]
      if (c < 0) hi = mid - 1
      else lo = mid + 1
    }
    return undefined
  }

  /** `word` against the listed word starting at `start`, in code-unit order as `<` compares strings. */
  private compare(word: string, start: number): number {
    for (let i = 0; ; i++) {
      const listed = this.text.charCodeAt(start + i)
      const listedEnded = listed === 10 || Number.isNaN(listed)
      if (i === word.length) return listedEnded ? 0 : -1
      if (listedEnded) return 1
      const d = word.charCodeAt(i) - listed
      if (d !== 0) return d
    }
  }
}

let ranks: RankList | undefined
let unknownWeight = 0
let gramsBuilt = false

/** The rank list alone (the verdict's word specificity reads it without the n-gram weights). */
function rankList(): RankList {
  if (ranks === undefined) {
    ranks = new RankList(readFileSync(new URL('../../../resources/word-ranks.txt', import.meta.url), 'utf8'))
    // Unlisted words are rarer than anything listed; the GloVe vocabulary itself holds 400k.
    unknownWeight = rankWeight(4 * ranks.size) ** WEIGHT_POWER
  }
  return ranks
}

function wordRanks(): RankList {
  const r = rankList()
  if (!gramsBuilt) {
    buildGramWeights(r.words(), 4 * r.size)
    gramsBuilt = true
  }
  return r
}

/**
 * Reads the rank list and builds the n-gram weights now (~170 ms, once per process) instead of in
 * the first request that needs them: the server calls it before it listens.
 */
export function loadWordTable(): void {
  wordRanks()
}

/** Whether the word table has been read and its n-gram weights built. */
export function wordTableLoaded(): boolean {
  return gramsBuilt
}

/** A lowercase word's general-corpus frequency rank (0: the most frequent), undefined when unlisted. */
export function wordRank(word: string): number | undefined {
  return rankList().get(word)
}

function weightOfRank(rank: number | undefined): number {
  return rank === undefined ? unknownWeight : rankWeight(rank) ** WEIGHT_POWER
}

/** IDF-like weight of a lowercase word from its general-corpus frequency rank. */
export function wordWeight(word: string): number {
  return weightOfRank(wordRanks().get(word))
}

export interface WordInfo {
  readonly stem: string
  readonly weight: number
  /** The word's distinct character n-gram slots. */
  readonly grams: Int32Array
  /** Their weights, in the same order. */
  readonly gramWeights: Float32Array
  /** Missing from the rank list. */
  readonly unlisted: boolean
}

// Stemming and the rank lookup dominate the per-check cost, and agent vocabularies repeat, so
// each word's outcome (null: skipped) is memoized. The cache only changes speed, never a
// result; it is cleared when it grows past its bound.
const WORD_CACHE_MAX = 50_000
const wordCache = new Map<string, WordInfo | null>()

/** The word's stem, weight, n-grams and listing; null when it is skipped (stop word, single letter). */
export function wordInfo(word: string): WordInfo | null {
  let info = wordCache.get(word)
  if (info === undefined) {
    // Single letters carry nothing, single digits can (a day, a count).
    if ((word.length < 2 && !(word >= '0' && word <= '9')) || STOP_WORDS.has(word)) {
      info = null
    } else {
      const rank = wordRanks().get(word)
      const grams = gramSlots(word)
      info = {
        stem: /\d/.test(word) ? word : stemmer(word),
        weight: weightOfRank(rank),
        grams,
        gramWeights: Float32Array.from(grams, gramWeight),
        unlisted: rank === undefined,
      }
    }
    if (wordCache.size >= WORD_CACHE_MAX) wordCache.clear()
    wordCache.set(word, info)
  }
  return info
}
