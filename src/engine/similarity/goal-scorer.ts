/**
 * How GoalDNA scores an action against its goal. GoalDNA only sees this interface, so another
 * similarity mode can be added here without touching its drift logic.
 */
import { goalBag, similarityToText, type GoalBag } from './enhanced-similarity.js'
import { fingerprint, lexicalSimilarity, NO_SIGNAL_SIMILARITY, trigramSet, trigramText, type Fingerprint } from './text.js'

/**
 * Similarity modes: `lexical` is token + trigram Jaccard; `enhanced` is the
 * offline IDF-weighted word and n-gram cosine of `enhanced-similarity.ts` (better on STS-B and τ-bench, see
 * `bench/quality.ts`), with its own threshold and severity bands (`goal-dna.ts`). `embeddings` is
 * the cosine of a provider's embedding vectors: the engine does no I/O, so the caller computes it
 * (providers/embeddings.ts) and passes it in; without it the check falls back to `enhanced`.
 */
export type SimilarityMode = 'lexical' | 'enhanced' | 'embeddings'

export const SIMILARITY_MODES: readonly SimilarityMode[] = ['lexical', 'enhanced', 'embeddings']

export function isSimilarityMode(value: unknown): value is SimilarityMode {
  return typeof value === 'string' && (SIMILARITY_MODES as readonly string[]).includes(value)
}

export interface ScorerOptions {
  /**
   * The session's plan steps / todos. `enhanced` adds their words to the goal at half weight
   * (a step the goal never names can still be on-plan); `lexical` fingerprints the goal alone.
   */
  context?: readonly string[]
}

export interface GoalScorer {
  readonly mode: SimilarityMode
  /** Content tokens of the goal. */
  readonly tokens: ReadonlySet<string>
  /** Character trigrams of the goal, as strings. */
  readonly trigrams: ReadonlySet<string>
  /** Similarity of `text` to the goal, in [0, 1]. */
  similarity(text: string): number
}

// Fingerprints are immutable, so sessions restored from JSON on every request share one per goal
// text (and with it the compiled index of `lexicalSimilarity`), most recently used kept.
const FINGERPRINT_CACHE_MAX = 512
const fingerprints = new Map<string, Fingerprint>()

function cachedFingerprint(goal: string): Fingerprint {
  let print = fingerprints.get(goal)
  if (print !== undefined) {
    fingerprints.delete(goal)
  } else {
    print = fingerprint(goal)
    if (fingerprints.size >= FINGERPRINT_CACHE_MAX) fingerprints.delete(fingerprints.keys().next().value!)
  }
  fingerprints.set(goal, print)
  return print
}

/** The lexical scorer: 0.7 × token Jaccard + 0.3 × trigram Jaccard against the goal fingerprint. */
export class LexicalScorer implements GoalScorer {
  readonly mode = 'lexical' as const
  private readonly print: Fingerprint
  private trigramStrings: ReadonlySet<string> | undefined

  constructor(goal: string) {
    this.print = cachedFingerprint(goal)
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

/**
 * IDF-weighted word and n-gram cosine, low-evidence scores lifted; the goal's bag (plus context) is
 * built once. It is also the scorer of an `embeddings` goal (`mode` says which was asked for):
 * there the cosine comes from outside (GoalDNA's `similarity` argument) and this is the fallback.
 */
export class EnhancedScorer implements GoalScorer {
  readonly mode: 'enhanced' | 'embeddings'
  private readonly bag: GoalBag
  private readonly goal: string
  private trigramStrings: ReadonlySet<string> | undefined

  constructor(goal: string, context: readonly string[] = [], mode: 'enhanced' | 'embeddings' = 'enhanced') {
    this.mode = mode
    this.goal = goal
    this.bag = goalBag(goal, context)
  }

  /** The goal's (and context's) word stems. */
  get tokens(): ReadonlySet<string> {
    return new Set(this.bag.weights.keys())
  }

  get trigrams(): ReadonlySet<string> {
    this.trigramStrings ??= new Set([...trigramSet(this.goal)].map(trigramText))
    return this.trigramStrings
  }

  similarity(text: string): number {
    return similarityToText(this.bag, text, NO_SIGNAL_SIMILARITY)
  }
}

/** Builds the scorer of `mode` for a goal text. */
export function createScorer(goal: string, mode: SimilarityMode = 'lexical', options: ScorerOptions = {}): GoalScorer {
  switch (mode) {
    case 'lexical':
      return new LexicalScorer(goal)
    case 'enhanced':
      return new EnhancedScorer(goal, options.context)
    case 'embeddings':
      return new EnhancedScorer(goal, options.context, 'embeddings')
    default:
      throw new Error(`unknown similarity mode: ${String(mode)}`)
  }
}

/**
 * One-off similarity of two texts in `mode` (nothing prepared for reuse). `enhanced` averages the
 * check in both directions (each text once as the goal), so it is symmetric and scores exactly
 * what a drift check scores.
 */
export function textSimilarity(mode: SimilarityMode, a: string, b: string): number {
  // `embeddings` needs a provider: offline, it scores as its fallback does.
  if (mode === 'enhanced' || mode === 'embeddings') {
    return (similarityToText(goalBag(a), b, NO_SIGNAL_SIMILARITY) + similarityToText(goalBag(b), a, NO_SIGNAL_SIMILARITY)) / 2
  }
  return lexicalSimilarity(fingerprint(a), b)
}
