/**
 * The `enhanced` similarity: the mean of two cosines with the goal, IDF-weighted stemmed words
 * and IDF-weighted character n-grams (`char-grams.ts`), low scores of short texts lifted toward
 * a neutral value (`liftLowEvidence`), less a small penalty per code (`code-shapes.ts`) or date
 * (`text-normalize.ts`) the goal contradicts, plus a bonus when the action names a date the goal names.
 *
 * Refinements over a plain word bag, each measured in `bench/quality.ts` (τ-bench ROC-AUC, all):
 * - a tool call's JSON keys (`"reservation_id":`) are its schema, the same whatever the task:
 *   dropped; the values and the function name stay;
 * - goal-side weights grow with the sublinear term frequency 1 + ln(tf); the checked text stays
 *   a set (repetition in a long action is verbosity, not focus);
 * - sharing no word with the goal means less the shorter the text: generic steps ("Could you
 *   provide your user ID?") are placed mid-way rather than with the off-task steps;
 * - n-grams let parts of words meet (+0.015); flattened word weights (+0.010); a code of a
 *   shape the goal uses but not named by it, −0.02 each (+0.012); with them the lift moved to
 *   0.12 and now applies almost in full. Each was picked on one half of τ-bench (split by a hash
 *   of the step id) and helps on both halves, on a split by task, and keeps STS-B (0.800 →
 *   0.802). Together: 0.790 → 0.819 (0.764 → 0.790 without user_id steps).
 * - dates ("May 20", "2024-05-20", "20 May"): "may" weighs little and a day number is one of a
 *   few, so a date both texts name hardly counts in the cosine. A goal that names dates now adds
 *   0.1 when the action names one of them and takes 0.02 (the code penalty) per other date, at
 *   most 3: 0.819 → 0.830 (0.790 → 0.802). Picked on half A (SHA-1 of the step id, pos and neg
 *   together; bonus 0.08–0.3 a plateau), AUC all / w/o user_id: half A 0.824 → 0.836 (0.797 →
 *   0.810), half B 0.814 → 0.824 (0.783 → 0.795), split by task 0.814 → 0.826 (0.785 → 0.799)
 *   and 0.825 → 0.835 (0.796 → 0.807); STS-B 80.25 → 80.27; ~+1 µs per check when the goal
 *   has a date (~+7 µs for an 8.8 KB action). Caveat: only 7 of the 27 τ-bench goals name a date.
 * What was tried and not kept, with its figures: the header of `bench/quality.ts`.
 *
 * IDF comes from a general corpus, never from the data being scored: `resources/word-ranks.txt`
 * lists the 100k most frequent words of the GloVe 6B vocabulary (Wikipedia + Gigaword), and by
 * Zipf's law a word's rarity grows with its frequency rank: weight = ln(1 + rank / 10)^0.3.
 * Words missing from the list (identifiers, codes, rare names) get the largest weight.
 *
 * Pure and deterministic; the one piece of I/O is reading that shipped list, once per process,
 * lazily, on the first enhanced fingerprint.
 */
import { readFileSync } from 'node:fs'
import { stemmer } from 'stemmer'
import { STOP_WORDS } from './text.js'
import { buildGramWeights, firstSeen, GramTable, gramSlots, gramWeight, newPass, rankWeight } from './char-grams.js'
import { codeShapes, mismatchedCodes } from './code-shapes.js'
import { dateMentions, normalizeText } from './text-normalize.js'

/** Flattens the rank weight: common domain words ("cancel") tell tasks apart more than a general corpus says. */
const WEIGHT_POWER = 0.3
/** Context entries (plan steps, todos) count at this fraction of a goal word's weight. */
export const CONTEXT_WEIGHT = 0.5

/** Stem → weight, and the squared norm, kept for the goal side once per session. */
export interface WeightedBag {
  readonly weights: ReadonlyMap<string, number>
  readonly norm2: number
}

/** A goal's bag plus what the drift check compares besides words: n-grams and codes. */
export interface GoalBag extends WeightedBag {
  /** N-gram slot → weight (`char-grams.ts`), with its squared norm. */
  readonly grams: GramTable
  /** Codes the goal names (lowercased) → shape, and the set of those shapes (`code-shapes.ts`). */
  readonly codes: ReadonlyMap<string, string>
  readonly shapes: ReadonlySet<string>
  /** Calendar dates the goal names, as "may 20" (`dateMentions`). */
  readonly dates: ReadonlySet<string>
}

let ranks: Map<string, number> | undefined
let unknownWeight = 0

function wordRanks(): Map<string, number> {
  if (ranks === undefined) {
    const text = readFileSync(new URL('../../resources/word-ranks.txt', import.meta.url), 'utf8')
    const words = text.split('\n').filter((w) => w.length > 0)
    ranks = new Map(words.map((w, i) => [w, i]))
    // Unlisted words are rarer than anything listed; the GloVe vocabulary itself holds 400k.
    unknownWeight = rankWeight(4 * words.length) ** WEIGHT_POWER
    buildGramWeights(words, 4 * words.length)
  }
  return ranks
}

/** IDF-like weight of a lowercase word from its general-corpus frequency rank. */
export function wordWeight(word: string): number {
  const rank = wordRanks().get(word)
  return rank === undefined ? unknownWeight : rankWeight(rank) ** WEIGHT_POWER
}

const WORD_RE = /[a-z0-9]+/g

interface WordInfo {
  readonly stem: string
  readonly weight: number
  /** The word's distinct character n-gram slots. */
  readonly grams: Int32Array
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
    info = skip ? null : { stem: /\d/.test(word) ? word : stemmer(word), weight: wordWeight(word), grams: gramSlots(word) }
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

/** Adds the n-grams of `text`'s content words to `into` (slot → weight × scale), keeping existing ones. */
function addGrams(into: Map<number, number>, text: string, scale: number): void {
  const norm = normalizeText(text)
  WORD_RE.lastIndex = 0
  for (let m = WORD_RE.exec(norm); m !== null; m = WORD_RE.exec(norm)) {
    const info = wordInfo(m[0])
    if (info === null) continue
    for (const slot of info.grams) if (!into.has(slot)) into.set(slot, gramWeight(slot) * scale)
  }
}

/**
 * The goal's bag (sublinear term frequency), optionally enriched with the session's plan steps /
 * todos at `CONTEXT_WEIGHT`: words the goal already has keep their goal weight. N-grams and
 * codes likewise, from the goal and then the context.
 */
export function goalBag(goal: string, context: readonly string[] = []): GoalBag {
  const weights = new Map<string, number>()
  addWordsWithTf(weights, goal)
  for (const entry of context) addWords(weights, entry, CONTEXT_WEIGHT)
  const grams = new Map<number, number>()
  addGrams(grams, goal, 1)
  for (const entry of context) addGrams(grams, entry, CONTEXT_WEIGHT)
  const codes = codeShapes(goal)
  for (const entry of context) codeShapes(entry, codes)
  const dates = dateMentions(normalizeText(goal))
  for (const entry of context) dateMentions(normalizeText(entry), dates)
  return { ...withNorm(weights), grams: new GramTable(grams), codes, shapes: new Set(codes.values()), dates }
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
/** N-gram dot product and squared norm of the last `scan` with `grams` set. */
let gramDot = 0
let gramNorm2 = 0
/** The normalized text of the last `scan`. */
let scannedText = ''

/**
 * Dot product of `goal` with the set of stems of `text`, in one pass; sets `scannedNorm2`, and,
 * when `grams` is given, `gramDot` / `gramNorm2` over the set of the text's n-grams.
 */
function scan(goal: WeightedBag, text: string, grams?: GramTable): number {
  seenStems.clear()
  if (grams !== undefined) newPass()
  const norm = normalizeText(text)
  scannedText = norm
  let dot = 0
  let norm2 = 0
  let gDot = 0
  let gNorm2 = 0
  WORD_RE.lastIndex = 0
  for (let m = WORD_RE.exec(norm); m !== null; m = WORD_RE.exec(norm)) {
    const info = wordInfo(m[0])
    if (info === null) continue
    if (grams !== undefined) {
      for (const slot of info.grams) {
        if (!firstSeen(slot)) continue
        const w = gramWeight(slot)
        gNorm2 += w * w
        gDot += grams.get(slot) * w
      }
    }
    if (seenStems.has(info.stem)) continue
    seenStems.add(info.stem)
    norm2 += info.weight * info.weight
    const g = goal.weights.get(info.stem)
    if (g !== undefined) dot += g * info.weight
  }
  scannedNorm2 = norm2
  gramDot = gDot
  gramNorm2 = gNorm2
  return dot
}

/**
 * `bagCosine(goal, weightedBag(text), noSignal)` in one pass over `text`, without building its
 * bag: the word-level cosine alone.
 */
export function cosineToText(goal: WeightedBag, text: string, noSignal: number): number {
  const dot = scan(goal, text)
  if (goal.norm2 === 0 || scannedNorm2 === 0) return noSignal
  return Math.min(1, dot / Math.sqrt(goal.norm2 * scannedNorm2))
}

/**
 * Where a score with little evidence behind it is pulled to: between the typical off-task and
 * on-task scores, so a text that names nothing of the goal ("You're welcome!") sits mid-way
 * instead of below every off-task step. Picked with `EVIDENCE_SCALE` on one half of τ-bench.
 */
export const NEUTRAL_SIMILARITY = 0.12
/**
 * Evidence (a text's squared word-weight norm) at which a low score counts half. τ-bench steps
 * have 10–100 (10th–90th percentile), so most low scores are pulled close to the neutral value:
 * against a goal of the same domain, sharing nothing says little. 100–600 are within 0.002.
 */
export const EVIDENCE_SCALE = 300
/** Share of the n-gram cosine in the drift check's score (the rest: the word cosine). */
export const GRAM_SHARE = 0.5
/**
 * Subtracted per code of the action that the goal lacks but whose shape it uses, and per date
 * of the action that a goal naming dates lacks (at most 3 of each).
 */
export const CODE_MISMATCH_PENALTY = 0.02
const MAX_MISMATCHES = 3
/** Added when the action names a date the goal names (once, however many). */
export const DATE_MATCH_BONUS = 0.1
const actionDates = new Set<string>()

/**
 * Lifts a score below `NEUTRAL_SIMILARITY` toward it in proportion to how little the text
 * says: (n·s + k·m) / (n + k) with n the text's squared weight norm. A long text that shares
 * nothing with the goal is strong evidence of drift, a short one is weak; scores at or above the
 * neutral value (shared words) are kept as they are, so an identical text still scores 1.
 */
export function liftLowEvidence(cosine: number, norm2: number): number {
  if (cosine >= NEUTRAL_SIMILARITY) return cosine
  return (norm2 * cosine + EVIDENCE_SCALE * NEUTRAL_SIMILARITY) / (norm2 + EVIDENCE_SCALE)
}

/**
 * The drift check: the mean of the word cosine and the n-gram cosine (`GRAM_SHARE`), lifted by
 * `liftLowEvidence` with the text's word evidence; if the goal names dates, plus
 * `DATE_MATCH_BONUS` when the text names one of them and less `CODE_MISMATCH_PENALTY` per other
 * date; less `CODE_MISMATCH_PENALTY` per mismatched code; in [0, 1].
 */
export function similarityToText(goal: GoalBag, text: string, noSignal: number): number {
  const dot = scan(goal, text, goal.grams)
  if (goal.norm2 === 0 || scannedNorm2 === 0) return noSignal
  const words = Math.min(1, dot / Math.sqrt(goal.norm2 * scannedNorm2))
  const gramNorms = goal.grams.norm2 * gramNorm2
  const grams = gramNorms === 0 ? 0 : Math.min(1, gramDot / Math.sqrt(gramNorms))
  let score = liftLowEvidence((1 - GRAM_SHARE) * words + GRAM_SHARE * grams, scannedNorm2)
  if (goal.dates.size > 0) {
    actionDates.clear()
    dateMentions(scannedText, actionDates)
    let named = false
    let missing = 0
    for (const date of actionDates) {
      if (goal.dates.has(date)) named = true
      else missing++
    }
    score += (named ? DATE_MATCH_BONUS : 0) - CODE_MISMATCH_PENALTY * Math.min(MAX_MISMATCHES, missing)
  }
  if (goal.shapes.size > 0) {
    score -= CODE_MISMATCH_PENALTY * Math.min(MAX_MISMATCHES, mismatchedCodes(text, goal.codes, goal.shapes))
  }
  return Math.min(1, Math.max(0, score))
}
