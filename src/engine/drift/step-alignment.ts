/**
 * GoalTracker's heuristics, as pure functions: keyword alignment of a step with the goal and the
 * plan, the drift update, the loop state hash and the recommended-action table.
 */
import { stemmer } from 'stemmer'
import { cutText, tokenSet } from '../similarity/text.js'

export type RecommendedAction = 'continue' | 'adjust' | 'replan' | 'abort'

export const DRIFT_WARNING = 0.3
export const DRIFT_CRITICAL = 0.6
export const LOOP_THRESHOLD = 3
export const PROGRESS_STALL_TURNS = 5
/** Alignment with no evidence either way: it neither moves drift nor counts as aligned. */
export const NEUTRAL_ALIGNMENT = 0.5
/** Alignment of a step that shares no keyword with the goal or the plan. */
export const BASE_ALIGNMENT = 0.15
/** Keyword matches that count as full coverage (a step rarely touches every goal word). */
export const FULL_MATCH_KEYWORDS = 2
/** How fast drift moves per step (see `updateDrift`). */
export const DRIFT_RATE = 0.5

// Porter stems make "users"/"user" and "creating"/"created" match. Memoized: words repeat a lot.
const stems = new Map<string, string>()
const STEM_CACHE_MAX = 20_000

function stem(word: string): string {
  let s = stems.get(word)
  if (s === undefined) {
    if (stems.size >= STEM_CACHE_MAX) stems.clear()
    s = stemmer(word)
    stems.set(word, s)
  }
  return s
}

/** Stems of a text's content tokens (`tokenSet`). */
export function stemSet(text: string): Set<string> {
  const out = new Set<string>()
  for (const t of tokenSet(text)) out.add(stem(t))
  return out
}

export interface AlignmentDetail {
  /** In [0, 1]. */
  score: number
  goal_matches: string[]
  plan_matches: string[]
  /** True when the step or both references had no content words: the score is neutral. */
  no_signal: boolean
}

/** Coverage of `ref` by `step`: matched keywords / min(|ref|, 2), capped at 1. */
function coverage(ref: ReadonlySet<string>, step: ReadonlySet<string>, matches: string[]): number {
  if (ref.size === 0) return 0
  let hits = 0
  for (const w of ref)
    if (step.has(w)) {
      hits++
      matches.push(w)
    }
  return Math.min(1, hits / Math.min(ref.size, FULL_MATCH_KEYWORDS))
}

/**
 * Heuristic keyword alignment of a step (description + output stems S) with the goal stems G
 * and the stems P of the plan steps in focus (the current and the next one):
 *   match = max(coverage(G, S), max over P of coverage(P, S)),  coverage = min(1, |R∩S| / min(|R|, 2))
 *   alignment = 0.15 + 0.85 × match
 * so one goal keyword out of several gives 0.575 (aligned), two or more give 1, none gives 0.15.
 * A step without content words, or a goal and plan without any, scores a neutral 0.5.
 */
export function keywordAlignment(goal: ReadonlySet<string>, planSteps: readonly ReadonlySet<string>[], step: ReadonlySet<string>): AlignmentDetail {
  const goal_matches: string[] = []
  const plan_matches: string[] = []
  const refsEmpty = goal.size === 0 && planSteps.every((p) => p.size === 0)
  if (step.size === 0 || refsEmpty) return { score: NEUTRAL_ALIGNMENT, goal_matches, plan_matches, no_signal: true }
  let match = coverage(goal, step, goal_matches)
  for (const p of planSteps) {
    const found: string[] = []
    const c = coverage(p, step, found)
    if (c > 0) plan_matches.push(...found.filter((w) => !plan_matches.includes(w)))
    match = Math.max(match, c)
  }
  return { score: BASE_ALIGNMENT + (1 - BASE_ALIGNMENT) * match, goal_matches, plan_matches, no_signal: false }
}

/**
 * Drift update. With e = |alignment − 0.5| × 2 (strength of the evidence, in [0, 1]):
 *   alignment > 0.5: drift' = drift × (1 − 0.5 e)               (aligned steps lower drift)
 *   alignment < 0.5: drift' = drift + 0.5 e × (1 − drift)       (off-goal steps raise it)
 *   alignment = 0.5: unchanged.
 * Both branches keep drift in [0, 1]. From 0, one off-goal step (0.15) gives 0.35 (adjust),
 * three in a row give 0.72 (replan); a fully aligned step halves drift.
 */
export function updateDrift(drift: number, alignment: number): number {
  const e = Math.abs(alignment - NEUTRAL_ALIGNMENT) * 2
  if (alignment > NEUTRAL_ALIGNMENT) return drift * (1 - DRIFT_RATE * e)
  if (alignment < NEUTRAL_ALIGNMENT) return drift + DRIFT_RATE * e * (1 - drift)
  return drift
}

/** A step is aligned (advances the goal) when its alignment is above neutral. */
export function isAligned(alignment: number): boolean {
  return alignment > NEUTRAL_ALIGNMENT
}

export interface ActionInputs {
  loop_detected: boolean
  drift: number
  stall_turns: number
  alignment: number
}

/**
 * The action table of `immediate` escalation (and of graduated escalation's rows after its loop
 * and drift rules, escalation.ts); the first matching row wins.
 */
export function recommendAction(s: ActionInputs): RecommendedAction {
  if (s.loop_detected) return 'replan'
  if (s.drift >= DRIFT_CRITICAL) return 'replan'
  if (s.stall_turns >= PROGRESS_STALL_TURNS) return 'replan'
  if (s.drift >= DRIFT_WARNING) return 'adjust'
  if (s.alignment < 0.3) return 'abort'
  if (s.alignment < 0.5) return 'adjust'
  return 'continue'
}

// JavaScript's `\s`: the separators of the whitespace split below.
function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13)
  if (c < 160) return false
  return c === 160 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
}

let wordHashes = new Float64Array(64)

/** Appends a 53-bit hash of every whitespace-separated word of `s` to `wordHashes`. */
function pushWordHashes(s: string, count: number): number {
  let n = count
  for (let i = 0; i < s.length;) {
    if (isSpace(s.charCodeAt(i))) {
      i++
      continue
    }
    let h1 = 0xdeadbeef
    let h2 = 0x41c6ce57
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i)
      if (isSpace(c)) break
      h1 = Math.imul(h1 ^ c, 2654435761)
      h2 = Math.imul(h2 ^ c, 1597334677)
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
    if (n === wordHashes.length) {
      const grown = new Float64Array(n * 2)
      grown.set(wordHashes)
      wordHashes = grown
    }
    wordHashes[n++] = (h2 & 0x1fffff) * 4294967296 + (h1 >>> 0)
  }
  return n
}

/**
 * Loop-detection state: the set of unique lowercased whitespace-separated words of the
 * description and of the first 200 characters of the trimmed output, hashed independently of
 * order. Every word counts, not only the first 20 in sorted order, so two long steps that merely share their
 * alphabetically first words are not taken for a loop. Sorting word hashes instead of words
 * keeps this allocation-free; the result is 14 hex digits.
 */
export function stateHash(description: string, output: string): string {
  let n = pushWordHashes(description.toLowerCase(), 0)
  n = pushWordHashes(cutText(output.trim(), 200).toLowerCase(), n)
  const sorted = wordHashes.subarray(0, n).sort()
  let h1 = 0x2545f491
  let h2 = 0x9e3779b9
  let prev = -1
  for (let i = 0; i < n; i++) {
    const x = sorted[i]!
    if (x === prev) continue
    prev = x
    const lo = x % 4294967296
    const hi = (x - lo) / 4294967296
    h1 = Math.imul(h1 ^ lo, 2654435761) ^ Math.imul(h2 ^ hi, 1597334677)
    h2 = Math.imul(h2 ^ lo, 2246822507) ^ Math.imul(h1 ^ (h1 >>> 15), 3266489909)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return hex14(h2, h1)
}

const HEX = '0123456789abcdef'
const hexCodes = new Array<number>(14)
/** Each character code's hex digit (0 for a character that is not one). */
const DIGIT = new Uint8Array(128)
for (let d = 0; d < 16; d++) DIGIT[HEX.charCodeAt(d)] = d

/**
 * The first 14 hex digits of h2:h1 as one flat string: a state hash. Built by slicing a
 * concatenation, each kept hash kept its 16-digit parent alive too (~64 bytes more a hash).
 */
export function hex14(h2: number, h1: number): string {
  for (let i = 0; i < 8; i++) hexCodes[i] = HEX.charCodeAt((h2 >>> (28 - 4 * i)) & 15)
  for (let i = 0; i < 6; i++) hexCodes[8 + i] = HEX.charCodeAt((h1 >>> (28 - 4 * i)) & 15)
  return String.fromCharCode(...hexCodes)
}

/** The hex digits `hash[from..to)` as a number (a digit that is not hex counts as 0). */
export function hexValue(hash: string, from: number, to: number): number {
  let n = 0
  for (let i = from; i < to; i++) n = n * 16 + (DIGIT[hash.charCodeAt(i)] ?? 0)
  return n
}
