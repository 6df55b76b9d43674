/**
 * Similarity by an OpenAI-compatible embeddings endpoint (GOALKEEPER_EMBEDDINGS_*), for sessions
 * with `config.similarity: embeddings`: the cosine of the goal's and the action's vectors, which
 * the engine then grades. The goal's vector is fetched once and kept in memory (an LRU keyed by
 * goal text, so a changed goal is fetched anew); after a restart it is fetched again on first use.
 * Any failure (timeout, HTTP error, malformed answer, dimension mismatch) is returned as a
 * fallback reason, never thrown: the check then uses `enhanced` and says why. A circuit breaker
 * (circuit-breaker.ts) skips the provider for a while after consecutive failures.
 */
import { LRUCache } from 'lru-cache'
import type { Dispatcher } from 'undici'
import type { EmbeddingsConfig } from '../config.js'
import { wallClock, type Clock } from '../engine/clock.js'
import { embeddingCosine, parseEmbeddings } from '../engine/similarity/embedding-vectors.js'
import { CircuitBreaker, DEFAULT_BREAKER, type BreakerOptions } from './circuit-breaker.js'
import { providerPost, ProviderStatusError } from './provider-http.js'

/** Embeds the inputs with one HTTP call; resolves with one vector per input, in order. */
export type EmbedFn = (inputs: string[]) => Promise<Float64Array[]>

export type EmbeddingSimilarity = { kind: 'similarity'; similarity: number } | { kind: 'fallback'; reason: string }

/** Why a check fell back, coarsely (the metrics label). */
export type FallbackCause = 'timeout' | 'error' | 'circuit_open'

export interface GoalEmbeddingsOptions {
  cacheMax?: number
  /** Defaults to DEFAULT_BREAKER. */
  breaker?: BreakerOptions
  clock?: Clock
  onFallback?: (cause: FallbackCause) => void
}

/** Room for a batch of 3072-dimension vectors as JSON text; a single one is ~70 kB. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024
/** Goal vectors kept: 256 × 1536 dimensions × 8 bytes ≈ 3 MB. */
const GOAL_VECTOR_CACHE_MAX = 256

/** `GOALKEEPER_EMBEDDINGS_URL` may be a base URL (`…/v1`) or the full `…/embeddings` endpoint. */
export function embeddingsUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '')
  return trimmed.endsWith('/embeddings') ? trimmed : `${trimmed}/embeddings`
}

export function createEmbed(config: EmbeddingsConfig, dispatcher?: Dispatcher): EmbedFn {
  const post = providerPost({
    url: embeddingsUrl(config.url),
    apiKey: config.apiKey,
    timeoutMs: config.timeoutMs,
    maxAnswerBytes: MAX_ANSWER_BYTES,
    label: 'embeddings',
    dispatcher,
  })
  // A single input goes as a string, the form every OpenAI-compatible server accepts.
  return async (inputs: string[]) => parseEmbeddings(await post({ model: config.model, input: inputs.length === 1 ? inputs[0] : inputs }), inputs.length)
}

/** The goal-vector cache, the timeout around one similarity and the circuit breaker around the provider. */
export class GoalEmbeddings {
  private readonly embed: EmbedFn
  readonly timeoutMs: number
  // Promises, so concurrent steps of one goal share one request; a failed one is dropped.
  private readonly goals: LRUCache<string, Promise<Float64Array>>
  private readonly breaker: CircuitBreaker
  private readonly onFallback: (cause: FallbackCause) => void

  constructor(embed: EmbedFn, timeoutMs: number, options: GoalEmbeddingsOptions = {}) {
    this.embed = embed
    this.timeoutMs = timeoutMs
    this.goals = new LRUCache({ max: options.cacheMax ?? GOAL_VECTOR_CACHE_MAX })
    this.breaker = new CircuitBreaker(options.breaker ?? DEFAULT_BREAKER, options.clock ?? wallClock)
    this.onFallback = options.onFallback ?? (() => {})
  }

  private goalVector(goal: string): Promise<Float64Array> {
    let vector = this.goals.get(goal)
    if (vector === undefined) {
      vector = this.embed([goal]).then((vs) => vs[0]!)
      this.goals.set(goal, vector)
      vector.catch(() => {
        if (this.goals.peek(goal) === vector) this.goals.delete(goal)
      })
    }
    return vector
  }

  private fallback(cause: FallbackCause, reason: string): EmbeddingSimilarity {
    this.onFallback(cause)
    return { kind: 'fallback', reason }
  }

  private failure(err: unknown): EmbeddingSimilarity {
    // undici's own timeout (the AbortSignal) may beat the timer below by a tick: same cause, same words.
    if (err instanceof Error && (err.name.includes('Timeout') || err.name === 'AbortError')) return this.timedOut()
    return this.fallback('error', `embeddings failed (${err instanceof Error ? err.message : String(err)})`)
  }

  private timedOut(): EmbeddingSimilarity {
    return this.fallback('timeout', `embeddings timed out after ${this.timeoutMs} ms`)
  }

  /** Cosine of `text` to `goal` in [0, 1], or why there is none; within `timeoutMs` in any case. */
  async similarity(goal: string, text: string): Promise<EmbeddingSimilarity> {
    const ticket = this.breaker.admit()
    if (typeof ticket === 'string') return this.fallback('circuit_open', ticket)
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs)
    })
    // The cosine may throw too (dimension mismatch): caught with the rest.
    const answer = Promise.all([this.goalVector(goal), this.embed([text]).then((vs) => vs[0]!)])
      .then(([g, a]) => embeddingCosine(g, a))
      .catch((err: unknown) => ({ err }))
    const outcome = await Promise.race([answer, timeout]) // neither rejects
    clearTimeout(timer)
    // One check is one success or failure, however many requests it made.
    if (typeof outcome === 'number') {
      this.breaker.succeeded(ticket)
      return { kind: 'similarity', similarity: outcome }
    }
    // A refused input (a text over the model's limit, say) shows the provider is up: counting it
    // as a failure would let one agent's inputs open the circuit for every agent.
    if (outcome !== 'timeout' && outcome.err instanceof ProviderStatusError && outcome.err.refusedInput) {
      this.breaker.succeeded(ticket)
      return this.failure(outcome.err)
    }
    this.breaker.failed(ticket)
    return outcome === 'timeout' ? this.timedOut() : this.failure(outcome.err)
  }
}
