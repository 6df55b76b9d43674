import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countTokens, fingerprint, jaccard, lexicalSimilarity, NO_SIGNAL_SIMILARITY, STOP_WORDS, tokenSet, trigramSet, trigramText, type Fingerprint } from '../../src/engine/similarity/text.js'

/** The specification, written plainly with sets and a regex: the fast path must equal it. */
function referenceTokens(text: string): Set<string> {
  const out = new Set<string>()
  for (const m of text.toLowerCase().matchAll(/[a-z_][a-z0-9_]*/g)) {
    if (m[0].length > 2 && !STOP_WORDS.has(m[0])) out.add(m[0])
  }
  return out
}

function referenceTrigrams(text: string): Set<string> {
  const s = text.toLowerCase()
  const out = new Set<string>()
  for (let i = 0; i + 3 <= s.length; i++) out.add(s.slice(i, i + 3))
  return out
}

function referenceJaccard<T>(a: Set<T>, b: Set<T>): number {
  const union = new Set([...a, ...b])
  if (union.size === 0) return 0
  let inter = 0
  for (const x of a) if (b.has(x)) inter++
  return inter / union.size
}

function referenceSimilarity(goal: string, text: string): number {
  const gt = referenceTokens(goal)
  const at = referenceTokens(text)
  if (gt.size === 0 || at.size === 0) return 0.5
  return 0.7 * referenceJaccard(gt, at) + 0.3 * referenceJaccard(referenceTrigrams(goal), referenceTrigrams(text))
}

// Words that make random texts share tokens and trigrams, plus the awkward cases.
const WORDS = [
  'user',
  'users',
  'User',
  'USER',
  'api',
  'REST',
  'build',
  'the',
  'and',
  'for',
  'user_id',
  '_private',
  'id',
  'abc123',
  '123abc',
  '9_x',
  'management',
  'Management',
  'İstanbul',
  'straße',
  'ΣΊΣΥΦΟΣ',
  'K',
  'ﬁle',
  '😀',
  'naïve',
  'données',
  'über',
  'a',
  'ab',
  'abc',
  'x_y_z',
  'db',
  'schema',
  'ＡＰＩ',
  'ǅ',
  '\u0000',
]
const SEPARATORS = [' ', '  ', ',', '.', '\n', '-', '/', '', '_', '1']
const textArb = fc.oneof(
  fc.array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 40 }).map((xs) => xs.map(([w, s]) => w + s).join('')),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 200 }),
)

describe('tokens and trigrams', () => {
  it('keeps lowercase content tokens longer than 2 characters, without stop words', () => {
    expect([...tokenSet('Build a REST API for user_management, the_2nd time!')].sort()).toEqual(['api', 'build', 'rest', 'the_2nd', 'time', 'user_management'])
    expect(tokenSet('a an the of to in')).toEqual(new Set())
    expect(tokenSet('')).toEqual(new Set())
  })

  it('tokenSet and trigramSet equal the plain definitions', () => {
    fc.assert(
      fc.property(textArb, (t) => {
        expect(tokenSet(t)).toEqual(referenceTokens(t))
        expect(new Set([...trigramSet(t)].map(trigramText))).toEqual(referenceTrigrams(t))
      }),
      { numRuns: 400 },
    )
  })

  it('trigrams cover the whole lowercased string with spaces and no padding', () => {
    expect([...trigramSet('Ab c')].map(trigramText)).toEqual(['ab ', 'b c'])
    expect(trigramSet('ab').size).toBe(0)
  })

  it('jaccard of empty sets is 0, of equal sets 1', () => {
    expect(jaccard(new Set(), new Set())).toBe(0)
    expect(jaccard(new Set([1, 2]), new Set([2, 1]))).toBe(1)
    expect(jaccard(new Set([1, 2]), new Set([2, 3]))).toBeCloseTo(1 / 3)
  })
})

describe('lexicalSimilarity (fast path)', () => {
  it('equals the Set-based definition exactly on random texts', () => {
    fc.assert(
      fc.property(textArb, textArb, (goal, action) => {
        expect(lexicalSimilarity(fingerprint(goal), action)).toBe(referenceSimilarity(goal, action))
      }),
      { numRuns: 1500 },
    )
  })

  it('equals the definition across many calls that reuse the scratch tables', () => {
    fc.assert(
      fc.property(textArb, fc.array(textArb, { minLength: 1, maxLength: 8 }), (goal, actions) => {
        const print = fingerprint(goal)
        for (const a of actions) expect(lexicalSimilarity(print, a)).toBe(referenceSimilarity(goal, a))
      }),
      { numRuns: 300 },
    )
  })

  it('handles long texts and texts with code units of 1024 and above', () => {
    const goal = 'Build a REST API for user management'
    const long = 'user api rest management build '.repeat(400) + 'x'.repeat(5000)
    const wide = 'User API ✓ management — données über alles Ωmega'
    for (const t of [long, wide, long + wide]) expect(lexicalSimilarity(fingerprint(goal), t)).toBe(referenceSimilarity(goal, t))
  })

  it('never confuses trigrams whose packed forms would overlap', () => {
    // 'ѣ' is U+0463 = 1024 + 'c': packed into 10-bit fields it would alias "x`ѣ" with "xac".
    const goal = 'user xac'
    for (const t of ['user x`ѣ', 'user x`ѣ xac', 'x`ѣ xac acЀ']) expect(lexicalSimilarity(fingerprint(goal), t)).toBe(referenceSimilarity(goal, t))
  })

  it('is symmetric, in [0, 1], and highest for identical texts', () => {
    fc.assert(
      fc.property(textArb, textArb, (a, b) => {
        const ab = lexicalSimilarity(fingerprint(a), b)
        expect(ab).toBe(lexicalSimilarity(fingerprint(b), a))
        expect(ab).toBeGreaterThanOrEqual(0)
        expect(ab).toBeLessThanOrEqual(1)
        if (tokenSet(a).size > 0) expect(lexicalSimilarity(fingerprint(a), a)).toBeGreaterThanOrEqual(ab)
      }),
      { numRuns: 500 },
    )
  })

  it('is 1 for an identical text with content and 0.5 when either side has no content tokens', () => {
    expect(lexicalSimilarity(fingerprint('Build a REST API'), 'Build a REST API')).toBe(1)
    expect(lexicalSimilarity(fingerprint('Build a REST API'), '')).toBe(NO_SIGNAL_SIMILARITY)
    expect(lexicalSimilarity(fingerprint('the and of'), 'Build a REST API')).toBe(NO_SIGNAL_SIMILARITY)
  })

  it('accepts any object with token and trigram sets as a fingerprint', () => {
    const print: Fingerprint = { tokens: new Set(['user', 'api']), trigrams: trigramSet('user api') }
    expect(lexicalSimilarity(print, 'user api')).toBe(1)
  })
})

describe('countTokens', () => {
  it('counts o200k tokens, 0 for the empty string', () => {
    expect(countTokens('')).toBe(0)
    expect(countTokens('hello world')).toBe(2)
  })
})
