/**
 * Pluggable goal-vs-text scorers. `lexical` is the seed's token + trigram Jaccard, unchanged;
 * `enhanced` is the offline IDF-weighted stem cosine of `enhanced-similarity.ts`.
 * The goal side is prepared once per scorer, so each check only processes the new text.
 */
import { bagCosine, goalBag, weightedBag } from './enhanced-similarity.js'
import { NO_SIGNAL_SIMILARITY, fingerprint, lexicalSimilarity } from './text.js'

export const SIMILARITY_MODES = ['lexical', 'enhanced'] as const
export type SimilarityMode = (typeof SIMILARITY_MODES)[number]

export interface ScorerOptions {
  /**
   * Plan steps / todos of the session. `enhanced` adds their words to the goal at half weight;
   * `lexical` ignores them (the seed fingerprints the goal alone).
   */
  context?: readonly string[]
}

export interface Scorer {
  readonly mode: SimilarityMode
  /** Similarity of `text` to the goal, in [0, 1]; 0.5 when either side gives no signal. */
  similarity(text: string): number
}

export function isSimilarityMode(value: unknown): value is SimilarityMode {
  return typeof value === 'string' && (SIMILARITY_MODES as readonly string[]).includes(value)
}

export function createScorer(mode: SimilarityMode, goal: string, options: ScorerOptions = {}): Scorer {
  if (mode === 'lexical') {
    const fp = fingerprint(goal)
    return { mode, similarity: (text) => lexicalSimilarity(fp, text) }
  }
  const bag = goalBag(goal, options.context)
  return { mode, similarity: (text) => bagCosine(bag, weightedBag(text), NO_SIGNAL_SIMILARITY) }
}

/** Symmetric one-off similarity of two texts (no goal preparation to reuse). */
export function textSimilarity(mode: SimilarityMode, a: string, b: string): number {
  if (mode === 'enhanced') return bagCosine(weightedBag(a), weightedBag(b), NO_SIGNAL_SIMILARITY)
  return lexicalSimilarity(fingerprint(a), b)
}
