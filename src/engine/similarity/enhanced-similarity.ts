/**
 * The `enhanced` similarity: the mean of two cosines with the goal, IDF-weighted stemmed words
 * and IDF-weighted character n-grams (`char-grams.ts`), low scores of short texts lifted toward
 * a neutral value (`liftLowEvidence`), less a small penalty per code (`code-shapes.ts`) or date
 * (`text-normalize.ts`) the goal contradicts, plus a bonus when the action names a date the goal
 * names and one when it names a goal word missing from the rank list.
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
 *   0.12. Each picked on one half of τ-bench (split by a hash of the step id), helps on both
 *   halves and on a split by task, keeps STS-B: 0.790 → 0.819 (0.764 → 0.790 w/o user_id steps).
 * - dates ("May 20", "2024-05-20", "20 May") hardly count in the cosine ("may" weighs little). A
 *   goal that names dates adds 0.1 when the action names one of them and takes 0.02 per other
 *   date, at most 3: 0.819 → 0.830 (0.790 → 0.802); halves A/B 0.824 → 0.836 / 0.814 → 0.824,
 *   task halves 0.814 → 0.826 / 0.825 → 0.835; STS-B 80.25 → 80.27. Only 7 of 27 goals name a date.
 * - a goal word the rank list lacks (identifier, number, code, rare name: "PEP4E0", "3668",
 *   "IAH") that the action names too adds 0.03, once: 0.830 → 0.834 (0.802 → 0.808). Bonus
 *   picked on half A (0.02–0.04 a plateau; a rank cut at 20k–100k instead of "unlisted" within
 *   0.001); all / w/o user_id: half A 0.836 → 0.841 (0.810 → 0.815), half B 0.824 → 0.828
 *   (0.795 → 0.800), task halves 0.834 → 0.838 (0.807 → 0.811), 0.825 → 0.830 (0.796 → 0.803);
 *   STS-B 80.29 → 80.29; no measurable cost per check.
 * What was tried and not kept, with its figures: the header of `bench/quality.ts`.
 *
 * IDF comes from a general corpus, never from the data being scored: word and n-gram weights
 * come from the shipped frequency-rank list (`word-info.ts`, `char-grams.ts`).
 *
 * Pure and deterministic; the one piece of I/O is reading that list, once per process, lazily,
 * on the first enhanced fingerprint.
 */
import { firstSeen, GramTable, newPass } from './char-grams.js'
import { codeShapes } from '../drift/code-shapes.js'
import { entityAdjustment, type GoalEntities } from '../drift/entity-evidence.js'
import { dateMentions, normalizeText } from './text-normalize.js'
import { wordInfo } from './word-info.js'

export { CODE_MISMATCH_PENALTY, DATE_MATCH_BONUS, UNLISTED_MATCH_BONUS } from '../drift/entity-evidence.js'
export { wordWeight } from './word-info.js'

/** The words of a normalized (lowercase) text; callers reset `lastIndex` before a scan. */
const WORD_RE = /[a-z0-9]+/g
/** Context entries (plan steps, todos) count at this fraction of a goal word's weight. */
const CONTEXT_WEIGHT = 0.5

/** Stem → weight, and the squared norm, kept for the goal side once per session. */
export interface WeightedBag {
  readonly weights: ReadonlyMap<string, number>
  readonly norm2: number
}

/** A goal's bag plus what the drift check compares besides words: n-grams, codes, dates, unlisted words. */
export interface GoalBag extends WeightedBag, GoalEntities {
  /** N-gram slot → weight (`char-grams.ts`), with its squared norm. */
  readonly grams: GramTable
  /** Stems of the goal's words missing from the rank list (identifiers, numbers, rare names). */
  readonly unlisted: ReadonlySet<string>
}

/**
 * Adds the words of `text` to `into` (stem → weight × scale), keeping an existing weight, and the
 * stems of its unlisted words to `unlisted` when given.
 */
function addWords(into: Map<string, number>, text: string, scale: number, unlisted?: Set<string>): void {
  const norm = normalizeText(text)
  WORD_RE.lastIndex = 0
  for (let m = WORD_RE.exec(norm); m !== null; m = WORD_RE.exec(norm)) {
    const info = wordInfo(m[0])
    if (info === null) continue
    if (!into.has(info.stem)) into.set(info.stem, info.weight * scale)
    if (info.unlisted) unlisted?.add(info.stem)
  }
}

/**
 * Adds the words of `text` to `into`, each weighted by its weight × (1 + ln tf) within `text`, and
 * the stems of its unlisted words to `unlisted`.
 */
function addWordsWithTf(into: Map<string, number>, text: string, unlisted: Set<string>): void {
  const counts = new Map<string, { weight: number; tf: number }>()
  const norm = normalizeText(text)
  WORD_RE.lastIndex = 0
  for (let m = WORD_RE.exec(norm); m !== null; m = WORD_RE.exec(norm)) {
    const info = wordInfo(m[0])
    if (info === null) continue
    if (info.unlisted) unlisted.add(info.stem)
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
    for (let k = 0; k < info.grams.length; k++) {
      const slot = info.grams[k]!
      if (!into.has(slot)) into.set(slot, info.gramWeights[k]! * scale)
    }
  }
}

/**
 * The goal's bag (sublinear term frequency), optionally enriched with the session's plan steps /
 * todos at `CONTEXT_WEIGHT`: words the goal already has keep their goal weight. N-grams and
 * codes likewise, from the goal and then the context.
 */
export function goalBag(goal: string, context: readonly string[] = []): GoalBag {
  const weights = new Map<string, number>()
  const unlisted = new Set<string>()
  addWordsWithTf(weights, goal, unlisted)
  for (const entry of context) addWords(weights, entry, CONTEXT_WEIGHT, unlisted)
  const grams = new Map<number, number>()
  addGrams(grams, goal, 1)
  for (const entry of context) addGrams(grams, entry, CONTEXT_WEIGHT)
  const codes = codeShapes(goal)
  for (const entry of context) codeShapes(entry, codes)
  const dates = dateMentions(normalizeText(goal))
  for (const entry of context) dateMentions(normalizeText(entry), dates)
  return { ...withNorm(weights), grams: new GramTable(grams), codes, shapes: new Set(codes.values()), dates, unlisted }
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
/** Whether the last `scan` met a stem of its `unlisted` set. */
let unlistedShared = false

/**
 * Dot product of `goal` with the set of stems of `text`, in one pass; sets `scannedNorm2`, and,
 * when `grams` is given, `gramDot` / `gramNorm2` over the set of the text's n-grams, and when
 * `unlisted` is given, `unlistedShared`.
 */
function scan(goal: WeightedBag, text: string, grams?: GramTable, unlisted?: ReadonlySet<string>): number {
  seenStems.clear()
  if (grams !== undefined) newPass()
  const norm = normalizeText(text)
  scannedText = norm
  let dot = 0
  let norm2 = 0
  let gDot = 0
  let gNorm2 = 0
  let shared = false
  WORD_RE.lastIndex = 0
  for (let m = WORD_RE.exec(norm); m !== null; m = WORD_RE.exec(norm)) {
    const info = wordInfo(m[0])
    if (info === null) continue
    if (grams !== undefined) {
      for (let k = 0; k < info.grams.length; k++) {
        const slot = info.grams[k]!
        if (!firstSeen(slot)) continue
        const w = info.gramWeights[k]!
        gNorm2 += w * w
        gDot += grams.get(slot) * w
      }
    }
    if (seenStems.has(info.stem)) continue
    seenStems.add(info.stem)
    norm2 += info.weight * info.weight
    const g = goal.weights.get(info.stem)
    if (g !== undefined) dot += g * info.weight
    // The goal's rare word may be a common one here ("baggages" / "baggage"): any word counts.
    if (!shared && unlisted !== undefined && g !== undefined && unlisted.has(info.stem)) shared = true
  }
  unlistedShared = shared
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
const GRAM_SHARE = 0.5
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
 * `liftLowEvidence` with the text's word evidence, plus `entityAdjustment` (`entity-evidence.ts`:
 * bonuses for a date or an unlisted word the goal names, penalties for other dates and codes);
 * in [0, 1].
 */
export function similarityToText(goal: GoalBag, text: string, noSignal: number): number {
  const dot = scan(goal, text, goal.grams, goal.unlisted)
  if (goal.norm2 === 0 || scannedNorm2 === 0) return noSignal
  const words = Math.min(1, dot / Math.sqrt(goal.norm2 * scannedNorm2))
  const gramNorms = goal.grams.norm2 * gramNorm2
  const grams = gramNorms === 0 ? 0 : Math.min(1, gramDot / Math.sqrt(gramNorms))
  const score = liftLowEvidence((1 - GRAM_SHARE) * words + GRAM_SHARE * grams, scannedNorm2) + entityAdjustment(goal, text, scannedText, unlistedShared)
  return Math.min(1, Math.max(0, score))
}
