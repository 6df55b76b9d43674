/**
 * Text primitives shared by the engine: content tokens, character trigrams, Jaccard and
 * token counting. Pure and allocation-lean: `similarity` runs on every agent step.
 */
import { createRequire } from 'node:module'
import { GoalIndex, type LexicalCounts } from './lexical-index.js'
import { STOP_WORDS } from './stop-words.js'

export { STOP_WORDS }

/**
 * Content tokens: the matches of `[a-z_][a-z0-9_]*` in the lowercased text (leftmost, longest),
 * longer than 2 characters, not a stop word. Underscored identifiers (`user_id`) stay whole.
 * Scanned by char code rather than with the regex: no match objects, about twice as fast.
 */
export function tokenSet(text: string): Set<string> {
  const out = new Set<string>()
  const s = text.toLowerCase()
  const n = s.length
  for (let i = 0; i < n;) {
    const c = s.charCodeAt(i)
    if (!(c === 95 || (c >= 97 && c <= 122))) {
      i++
      continue
    }
    const start = i
    for (i++; i < n; i++) {
      const d = s.charCodeAt(i)
      if (!(d === 95 || (d >= 97 && d <= 122) || (d >= 48 && d <= 57))) break
    }
    if (i - start > 2) {
      const t = s.slice(start, i)
      if (!STOP_WORDS.has(t)) out.add(t)
    }
  }
  return out
}

/**
 * Character trigrams of the whole lowercased string (spaces included, no padding), each packed
 * into one number (3 × 16-bit code units < 2^48) so set operations avoid string allocation.
 */
export function trigramSet(text: string): Set<number> {
  const out = new Set<number>()
  const s = text.toLowerCase()
  for (let i = 0; i + 2 < s.length; i++) {
    out.add(s.charCodeAt(i) * 4294967296 + s.charCodeAt(i + 1) * 65536 + s.charCodeAt(i + 2))
  }
  return out
}

/** Unpacks a trigram made by `trigramSet` back into its three characters. */
export function trigramText(packed: number): string {
  const a = Math.floor(packed / 4294967296)
  const rest = packed - a * 4294967296
  return String.fromCharCode(a, Math.floor(rest / 65536), rest % 65536)
}

/** |A ∩ B| / |A ∪ B|; 0 when both are empty. Iterates the smaller set. */
export function jaccard<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  if (large.size === 0) return 0
  let inter = 0
  for (const x of small) if (large.has(x)) inter++
  return inter / (a.size + b.size - inter)
}

/** A text's lexical fingerprint: what GoalDNA keeps of the goal. */
export interface Fingerprint {
  readonly tokens: ReadonlySet<string>
  readonly trigrams: ReadonlySet<number>
}

export function fingerprint(text: string): Fingerprint {
  return { tokens: tokenSet(text), trigrams: trigramSet(text) }
}

/** Weights of the lexical similarity: token Jaccard and character-trigram Jaccard. */
export const TOKEN_WEIGHT = 0.7
export const TRIGRAM_WEIGHT = 0.3
/** Returned when either side has no content tokens: no signal either way. */
export const NO_SIGNAL_SIMILARITY = 0.5

/** Compiled goal indexes, built on first use of a fingerprint (fingerprints are immutable). */
const indexes = new WeakMap<Fingerprint, GoalIndex>()
const counts: LexicalCounts = { tokens: 0, tokenHits: 0, trigrams: 0, trigramHits: 0 }

function indexOf(goal: Fingerprint): GoalIndex {
  let index = indexes.get(goal)
  if (index === undefined) {
    index = new GoalIndex(goal.tokens, goal.trigrams)
    indexes.set(goal, index)
  }
  return index
}

/**
 * The lexical similarity: 0.7 × token Jaccard + 0.3 × trigram Jaccard, or 0.5 when
 * either side has no content tokens (an empty or all-stop-word text says nothing about drift).
 * Computed without building sets (see `lexical-index.ts`); the tests hold the plain Set-based
 * definition and assert equality.
 */
export function lexicalSimilarity(goal: Fingerprint, text: string): number {
  if (goal.tokens.size === 0) return NO_SIGNAL_SIMILARITY
  const c = indexOf(goal).count(text, counts)
  if (c.tokens === 0) return NO_SIGNAL_SIMILARITY
  const tokenJ = c.tokenHits / (goal.tokens.size + c.tokens - c.tokenHits)
  const union = goal.trigrams.size + c.trigrams - c.trigramHits
  const trigramJ = union === 0 ? 0 : c.trigramHits / union
  return TOKEN_WEIGHT * tokenJ + TRIGRAM_WEIGHT * trigramJ
}

/** Special-token strings such as `<|endoftext|>` in user text are counted as plain text, never thrown on. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() }

type O200k = typeof import('gpt-tokenizer/encoding/o200k_base')

/**
 * BPE merge results the tokenizer memoizes (its default is 100,000). Callers memoize whole
 * pieces themselves (`cachedTokenCount`), so a small cache keeps long-running processes lean.
 */
export const TOKENIZER_MERGE_CACHE = 5_000

let o200k: O200k | undefined

/**
 * The o200k encoding, loaded on the first count: its rank tables cost ~20 MB of heap (~60 MB of
 * RSS while parsing), which a process that never builds a reminder or recitation never pays.
 * `require` (the package's CommonJS build) keeps `countTokens` synchronous.
 */
function tokenizer(): O200k {
  if (o200k === undefined) {
    o200k = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as O200k
    o200k.setMergeCacheSize(TOKENIZER_MERGE_CACHE)
  }
  return o200k
}

/** Token count with the o200k tokenizer (GPT-4o family), not characters / 4. */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : tokenizer().countTokens(text, PLAIN_TEXT)
}

/**
 * `end`, or one less where a cut there would split a surrogate pair: text is cut between code
 * points, since half a pair is no valid UTF-8 and PostgreSQL refuses it in a JSON value (one step
 * with an emoji across a cut broke every later read of the row).
 */
export function codePointEnd(text: string, end: number): number {
  if (end <= 0 || end >= text.length) return end
  const last = text.charCodeAt(end - 1)
  return last >= 0xd800 && last <= 0xdbff ? end - 1 : end
}

/** At most the first `max` UTF-16 units of `text`, cut between code points (`codePointEnd`). */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, codePointEnd(text, max))
}

/** Cuts `text` to at most `max` characters, marking the cut with an ellipsis. */
export function truncateChars(text: string, max: number): string {
  return text.length <= max ? text : `${cutText(text, Math.max(0, max - 3))}...`
}

/**
 * Cuts `text` so that it holds at most `maxTokens` tokens, ending with `marker`.
 * Binary search on the character length keeps tokenizer calls to O(log n).
 */
export function truncateToTokens(text: string, maxTokens: number, marker = ''): string {
  if (countTokens(text) <= maxTokens) return text
  const budget = maxTokens - countTokens(marker)
  if (budget <= 0) return ''
  let lo = 0
  let hi = text.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (countTokens(text.slice(0, mid)) <= budget) lo = mid
    else hi = mid - 1
  }
  return text.slice(0, codePointEnd(text, lo)) + marker
}
