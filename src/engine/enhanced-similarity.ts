/**
 * The `enhanced` similarity: cosine of IDF-weighted bags of stemmed words, with low scores of
 * short texts lifted toward a neutral value (`liftLowEvidence`).
 *
 * Three refinements over a plain bag (measured in `bench/quality.ts`, each a small, flat gain):
 * - a tool call's JSON keys (`"reservation_id":`) are the tool's schema, identical in every call
 *   whatever the task, so they are dropped; the values and the function name stay;
 * - a word the goal repeats is what the goal is about: goal-side weights grow with the classic
 *   sublinear term frequency 1 + ln(tf). The checked text stays a set (repetition in a long
 *   action is verbosity, not focus);
 * - sharing no word with the goal means less the shorter the text: generic steps ("Could you
 *   provide your user ID?") carry no task signal against any goal, so they are placed mid-way
 *   rather than with the off-task steps (the largest gain of the three on τ-bench).
 *
 * Why this shape (measured in `bench/quality.ts`): a rare shared word ("Seattle", a booking code,
 * a date) says far more about "same task" than a common one ("flight"); stemming lets
 * "cancel"/"cancelled" meet. Averaged word vectors were tried and hurt on same-domain negatives.
 *
 * IDF comes from a general corpus, never from the data being scored: `resources/word-ranks.txt`
 * lists the 100k most frequent words of the GloVe 6B vocabulary (Wikipedia + Gigaword), and by
 * Zipf's law a word's document rarity grows with its frequency rank, so weight = ln(1 + rank / 10).
 * Words missing from the list (identifiers, codes, rare names) get the largest weight.
 *
 * Pure and deterministic; the one piece of I/O is reading that shipped list, once per process,
 * lazily, on the first enhanced fingerprint.
 */
import { readFileSync } from 'node:fs'
import { stemmer } from 'stemmer'
import { STOP_WORDS } from './text.js'

/** Divisor of the rank in the weight: words above roughly rank 10 are all "common". */
const RANK_SCALE = 10
/** Context entries (plan steps, todos) count at this fraction of a goal word's weight. */
export const CONTEXT_WEIGHT = 0.5

/** Stem → weight, and the squared norm, kept for the goal side once per session. */
export interface WeightedBag {
  readonly weights: ReadonlyMap<string, number>
  readonly norm2: number
}

let ranks: Map<string, number> | undefined
let unknownWeight = 0

function wordRanks(): Map<string, number> {
  if (ranks === undefined) {
    const text = readFileSync(new URL('../../resources/word-ranks.txt', import.meta.url), 'utf8')
    const words = text.split('\n').filter((w) => w.length > 0)
    ranks = new Map(words.map((w, i) => [w, i]))
    // Unlisted words are rarer than anything listed; the GloVe vocabulary itself holds 400k.
    unknownWeight = Math.log(1 + (4 * words.length) / RANK_SCALE)
  }
  return ranks
}

/** IDF-like weight of a lowercase word from its general-corpus frequency rank. */
export function wordWeight(word: string): number {
  const rank = wordRanks().get(word)
  return rank === undefined ? unknownWeight : Math.log(1 + rank / RANK_SCALE)
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september',
  'october', 'november', 'december']
const ISO_DATE_RE = /\b(\d{4})-(\d{2})-(\d{2})\b/g
const ORDINAL_RE = /\b(\d+)(?:st|nd|rd|th)\b/g
const WORD_RE = /[a-z0-9]+/g
const DIGIT_RE = /\d/
/** A JSON object key: `"flight_number":` (after lowercasing). */
const JSON_KEY_RE = /"[a-z_][a-z0-9_]*"\s*:/g

/**
 * Lowercases, drops JSON object keys (a tool call's schema, not its content) and writes dates
 * the way people do, so a tool call's `2024-05-20` meets a goal's "May 20th": ISO dates become
 * "2024 may 20", ordinals lose their suffix.
 */
export function normalizeText(text: string): string {
  let lower = text.toLowerCase()
  // Most texts hold neither JSON nor a digit: skip those scans then.
  if (lower.includes('":')) lower = lower.replace(JSON_KEY_RE, ':')
  if (!DIGIT_RE.test(lower)) return lower
  return lower
    .replace(ISO_DATE_RE, (_m, y: string, m: string, d: string) => `${y} ${MONTHS[Number(m) - 1] ?? m} ${Number(d)}`)
    .replace(ORDINAL_RE, '$1')
}

interface WordInfo {
  readonly stem: string
  readonly weight: number
}

// Stemming and the rank lookup dominate the per-check cost, and agent vocabularies repeat, so
// each word's outcome (null: skipped) is memoized. The cache only changes speed, never a
// result; it is cleared when it grows past its bound.
const WORD_CACHE_MAX = 50_000
const wordCache = new Map<string, WordInfo | null>()

function wordInfo(word: string): WordInfo | null {
  let info = wordCache.get(word)
  if (info === undefined) {
    // Single letters carry nothing, single digits can (a day, a count).
    const skip = (word.length < 2 && !(word >= '0' && word <= '9')) || STOP_WORDS.has(word)
    info = skip ? null : { stem: /\d/.test(word) ? word : stemmer(word), weight: wordWeight(word) }
    if (wordCache.size >= WORD_CACHE_MAX) wordCache.clear()
    wordCache.set(word, info)
  }
  return info
}

/** Adds the words of `text` to `into` (stem → weight × scale), keeping an existing weight. */
function addWords(into: Map<string, number>, text: string, scale: number): void {
  const norm = normalizeText(text)
  WORD_RE.lastIndex = 0
  for (let m = WORD_RE.exec(norm); m !== null; m = WORD_RE.exec(norm)) {
    const info = wordInfo(m[0])
    if (info !== null && !into.has(info.stem)) into.set(info.stem, info.weight * scale)
  }
}

/** Adds the words of `text` to `into`, each weighted by its weight × (1 + ln tf) within `text`. */
function addWordsWithTf(into: Map<string, number>, text: string): void {
  const counts = new Map<string, { weight: number; tf: number }>()
  const norm = normalizeText(text)
  WORD_RE.lastIndex = 0
  for (let m = WORD_RE.exec(norm); m !== null; m = WORD_RE.exec(norm)) {
    const info = wordInfo(m[0])
    if (info === null) continue
    const seen = counts.get(info.stem)
    if (seen === undefined) counts.set(info.stem, { weight: info.weight, tf: 1 })
    else seen.tf++
  }
  for (const [stem, { weight, tf }] of counts) into.set(stem, weight * (1 + Math.log(tf)))
}

function withNorm(weights: Map<string, number>): WeightedBag {
  let norm2 = 0
  for (const v of weights.values()) norm2 += v * v
  return { weights, norm2 }
}

/** The weighted bag of one text. */
export function weightedBag(text: string): WeightedBag {
  const weights = new Map<string, number>()
  addWords(weights, text, 1)
  return withNorm(weights)
}

/**
 * The goal's bag (sublinear term frequency), optionally enriched with the session's plan steps /
 * todos at `CONTEXT_WEIGHT`: words the goal already has keep their goal weight.
 */
export function goalBag(goal: string, context: readonly string[] = []): WeightedBag {
  const weights = new Map<string, number>()
  addWordsWithTf(weights, goal)
  for (const entry of context) addWords(weights, entry, CONTEXT_WEIGHT)
  return withNorm(weights)
}

/** Cosine of two weighted bags in [0, 1]; `noSignal` when either is empty. */
export function bagCosine(a: WeightedBag, b: WeightedBag, noSignal: number): number {
  if (a.norm2 === 0 || b.norm2 === 0) return noSignal
  const [small, large] = a.weights.size <= b.weights.size ? [a, b] : [b, a]
  let dot = 0
  for (const [stem, w] of small.weights) {
    const v = large.weights.get(stem)
    if (v !== undefined) dot += w * v
  }
  return Math.min(1, dot / Math.sqrt(a.norm2 * b.norm2))
}

// Reused across calls (the engine is synchronous), so a check allocates no map of its own.
const seenStems = new Set<string>()
/** Squared weight norm of the text of the last `scan` (a module variable: no tuple per check). */
let scannedNorm2 = 0

/** Dot product of `goal` with the set of stems of `text`, in one pass; sets `scannedNorm2`. */
function scan(goal: WeightedBag, text: string): number {
  seenStems.clear()
  const norm = normalizeText(text)
  let dot = 0
  let norm2 = 0
  WORD_RE.lastIndex = 0
  for (let m = WORD_RE.exec(norm); m !== null; m = WORD_RE.exec(norm)) {
    const info = wordInfo(m[0])
    if (info === null || seenStems.has(info.stem)) continue
    seenStems.add(info.stem)
    norm2 += info.weight * info.weight
    const g = goal.weights.get(info.stem)
    if (g !== undefined) dot += g * info.weight
  }
  scannedNorm2 = norm2
  return dot
}

/**
 * `bagCosine(goal, weightedBag(text), noSignal)` in one pass over `text`, without building its
 * bag.
 */
export function cosineToText(goal: WeightedBag, text: string, noSignal: number): number {
  const dot = scan(goal, text)
  if (goal.norm2 === 0 || scannedNorm2 === 0) return noSignal
  return Math.min(1, dot / Math.sqrt(goal.norm2 * scannedNorm2))
}

/**
 * Where a score with little evidence behind it is pulled to: between the typical off-task and
 * on-task cosines (τ-bench medians about 0.07 and 0.17), so a short text that names nothing of
 * the goal ("You're welcome!") sits mid-way instead of below every off-task step.
 */
export const NEUTRAL_SIMILARITY = 0.15
/**
 * Evidence (a text's squared weight norm) at which a low cosine counts half: 300 ≈ six
 * distinctive words of weight 7 (a rank around 10,000). `bench/quality.ts` shows the τ-bench
 * figure flat within ±0.01 over 0.12–0.2 × 200–1000.
 */
export const EVIDENCE_SCALE = 300

/**
 * Lifts a cosine below `NEUTRAL_SIMILARITY` toward it in proportion to how little the text
 * says: (n·cos + k·m) / (n + k) with n the text's squared weight norm. A long text that shares
 * nothing with the goal is strong evidence of drift, a short one is weak; scores at or above the
 * neutral value (shared words) are kept as they are, so an identical text still scores 1.
 */
export function liftLowEvidence(cosine: number, norm2: number): number {
  if (cosine >= NEUTRAL_SIMILARITY) return cosine
  return (norm2 * cosine + EVIDENCE_SCALE * NEUTRAL_SIMILARITY) / (norm2 + EVIDENCE_SCALE)
}

/** The drift check: `cosineToText`, then `liftLowEvidence` with the text's evidence. */
export function similarityToText(goal: WeightedBag, text: string, noSignal: number): number {
  const dot = scan(goal, text)
  if (goal.norm2 === 0 || scannedNorm2 === 0) return noSignal
  return liftLowEvidence(Math.min(1, dot / Math.sqrt(goal.norm2 * scannedNorm2)), scannedNorm2)
}
