/**
 * Token counting helpers for the context builders: a memo for text pieces that recur across
 * calls (the goal, pitfalls, a todo block) and a cut that provably fits a token budget.
 */
import { codePointEnd, countTokens } from '../similarity/text.js'

/** Bounded so a long-lived process cannot grow it without limit; cleared whole when full. */
const MEMO_LIMIT = 2048
const memo = new Map<string, number>()

/**
 * `countTokens` with a memo. A warm o200k count costs ~0.25 µs per token, so reminders and
 * recitations count their stable pieces once and add them up (see `joinedTokenCount`).
 */
export function cachedTokenCount(text: string): number {
  const hit = memo.get(text)
  if (hit !== undefined) return hit
  const n = countTokens(text)
  if (memo.size >= MEMO_LIMIT) memo.clear()
  memo.set(text, n)
  return n
}

/**
 * Cuts `text` so that `prefix + marker` holds at most `maxTokens` tokens. Every candidate is
 * counted as the whole string it would return, so the result is within budget even where BPE
 * merges across the cut differ from the parts' counts. Falls back to no marker when the marker
 * alone does not fit, and to '' when nothing does.
 */
export function clipToTokens(text: string, maxTokens: number, marker = ''): string {
  if (countTokens(text) <= maxTokens) return text
  if (maxTokens <= 0) return ''
  if (marker !== '' && countTokens(marker) > maxTokens) return clipToTokens(text, maxTokens)
  // Tokens are at least one character, so the fitting prefix is at most maxTokens×(longest
  // token) long; starting hi from a bound keeps the binary search short on very long inputs.
  let lo = 0
  let hi = Math.min(text.length, maxTokens * 64)
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (countTokens(text.slice(0, mid) + marker) <= maxTokens) lo = mid
    else hi = mid - 1
  }
  const out = text.slice(0, codePointEnd(text, lo)) + marker
  return lo === 0 && countTokens(out) > maxTokens ? '' : out
}

/**
 * Cut points of `countTokensByLines`: right after a newline run, where the next character is
 * neither whitespace nor "/". o200k's pre-tokenizer always ends a pre-token there (its newline
 * patterns stop at the first other character, and only "/" may follow punctuation + newlines),
 * and BPE never merges across pre-tokens.
 */
const LINE_CUT_RE = /(?<=\n)(?=[^\s/])/

/**
 * Exact `countTokens(text)` for multi-line text, as a sum of memoized per-line counts: a block
 * rebuilt with one changed line costs one short tokenizer call instead of a whole one.
 */
export function countTokensByLines(text: string): number {
  let total = 0
  for (const line of text.split(LINE_CUT_RE)) total += cachedTokenCount(line)
  return total
}

const clipMemo = new Map<string, string>()

/** `clipToTokens` with a bounded memo, for pieces (goal, pitfalls) clipped again on every build. */
export function cachedClip(text: string, maxTokens: number, marker = ''): string {
  const key = `${maxTokens}\u0000${marker}\u0000${text}`
  const hit = clipMemo.get(key)
  if (hit !== undefined) return hit
  const out = clipToTokens(text, maxTokens, marker)
  if (clipMemo.size >= MEMO_LIMIT) clipMemo.clear()
  clipMemo.set(key, out)
  return out
}

/** Control characters (newlines, tabs, C0/C1, line separators) that could break a one-line format. */
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g
const SPACES_RE = / {2,}/g
// eslint-disable-next-line no-control-regex
const NEEDS_CLEANING_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]| {2}|^\s|\s$/

/** One line of user text: control characters become spaces, runs of spaces collapse, trimmed. */
export function oneLine(text: string): string {
  // Most items are already clean: one scan instead of three passes and copies.
  if (!NEEDS_CLEANING_RE.test(text)) return text
  return text.replace(CONTROL_RE, ' ').replace(SPACES_RE, ' ').trim()
}
