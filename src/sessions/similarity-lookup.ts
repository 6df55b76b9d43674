/**
 * How a session with `config.similarity: embeddings` uses the provider: the cosine is looked up
 * before the write (outside any transaction, like the LLM), passed to the engine in the journaled
 * op, and a check that fell back to `enhanced` says why in `similarity_fallback`.
 */
import type { DriftCheck } from '../engine/drift/goal-dna.js'
import type { GoalSession } from '../engine/session/goal-session.js'
import type { EmbeddingSimilarity, GoalEmbeddings } from '../providers/embeddings.js'
import type { SessionRow } from './repository.js'

/** A provider answer for an action, and the goal it was computed against. */
export interface LookedUp {
  goal: string
  outcome: EmbeddingSimilarity
}

export const NO_PROVIDER = 'no embeddings provider configured (GOALKEEPER_EMBEDDINGS_URL)'

function usesEmbeddings(meta: Pick<SessionRow, 'config'>): boolean {
  return (JSON.parse(meta.config) as { similarity?: string }).similarity === 'embeddings'
}

/** Asks the provider when the session uses embeddings and one is configured; never throws. */
export async function lookUp(embeddings: GoalEmbeddings | undefined, meta: Pick<SessionRow, 'config' | 'goal'>, text: string): Promise<LookedUp | undefined> {
  if (embeddings === undefined || !usesEmbeddings(meta)) return undefined
  return { goal: meta.goal, outcome: await embeddings.similarity(meta.goal, text) }
}

/** The cosine to hand the engine: only if it was computed against the session's current goal. */
export function similarityFor(session: GoalSession, looked: LookedUp | undefined): number | undefined {
  return looked?.outcome.kind === 'similarity' && looked.goal === session.goal ? looked.outcome.similarity : undefined
}

/** Says why an `embeddings` check used `enhanced` (the engine marks such a check `similarity_mode: enhanced`). */
export function noteFallback(check: DriftCheck, looked: LookedUp | undefined): void {
  if (check.similarity_mode !== 'enhanced') return
  check.similarity_fallback = looked === undefined ? NO_PROVIDER : looked.outcome.kind === 'fallback' ? looked.outcome.reason : 'the goal changed while its embedding was fetched'
}
