/**
 * How GoalDNA scores an action against its goal. GoalDNA only sees this interface, so another
 * similarity mode can be added here without touching its drift logic.
 */
import { fingerprint, lexicalSimilarity, trigramText, type Fingerprint } from './text.js'

/** Similarity modes; only the seed's lexical fingerprint exists so far. */
export type SimilarityMode = 'lexical'

export const SIMILARITY_MODES: readonly SimilarityMode[] = ['lexical']

export interface GoalScorer {
  readonly mode: SimilarityMode
  /** Content tokens of the goal. */
  readonly tokens: ReadonlySet<string>
  /** Character trigrams of the goal, as strings. */
  readonly trigrams: ReadonlySet<string>
  /** Similarity of `text` to the goal, in [0, 1]. */
  similarity(text: string): number
}

/** The seed's scorer: 0.7 × token Jaccard + 0.3 × trigram Jaccard against the goal fingerprint. */
export class LexicalScorer implements GoalScorer {
  readonly mode = 'lexical' as const
  private readonly print: Fingerprint
  private trigramStrings: ReadonlySet<string> | undefined

  constructor(goal: string) {
    this.print = fingerprint(goal)
  }

  get tokens(): ReadonlySet<string> {
    return this.print.tokens
  }

  /** Derived on first use: the scorer itself works on packed numbers. */
  get trigrams(): ReadonlySet<string> {
    this.trigramStrings ??= new Set([...this.print.trigrams].map(trigramText))
    return this.trigramStrings
  }

  similarity(text: string): number {
    return lexicalSimilarity(this.print, text)
  }
}

/** Builds the scorer of `mode` for a goal text. */
export function createScorer(goal: string, mode: SimilarityMode = 'lexical'): GoalScorer {
  switch (mode) {
    case 'lexical':
      return new LexicalScorer(goal)
    default:
      throw new Error(`unknown similarity mode: ${String(mode)}`)
  }
}
