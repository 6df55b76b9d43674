/**
 * The pure half of the `embeddings` similarity mode: reading an OpenAI-compatible embeddings
 * answer and the cosine of two vectors. The HTTP call and the goal-vector cache live in
 * providers/embeddings.ts; the engine only receives the resulting similarity.
 */

/** Why a provider answer is unusable; the check then falls back to `enhanced`. */
export class EmbeddingError extends Error {
  override name = 'EmbeddingError'
}

/**
 * The vectors of an embeddings answer, `data[i].embedding` in input order (OpenAI's shape; `index`
 * orders them when present). Throws an EmbeddingError unless there are `count` non-empty vectors
 * of finite numbers.
 */
export function parseEmbeddings(json: unknown, count: number): Float64Array[] {
  const data = (json as { data?: unknown } | null)?.data
  if (!Array.isArray(data) || data.length !== count) throw new EmbeddingError(`answer has no data array of ${count} embedding(s)`)
  const items = data.every((d) => typeof (d as { index?: unknown })?.index === 'number') ? [...data].sort((a, b) => (a as { index: number }).index - (b as { index: number }).index) : data
  return items.map((d) => {
    const e = (d as { embedding?: unknown })?.embedding
    if (!Array.isArray(e) || e.length === 0) throw new EmbeddingError('answer has no data[].embedding array')
    const v = new Float64Array(e.length)
    for (let i = 0; i < e.length; i++) {
      const x = e[i]
      if (typeof x !== 'number' || !Number.isFinite(x)) throw new EmbeddingError('embedding holds a non-number')
      v[i] = x
    }
    return v
  })
}

/**
 * Cosine of two vectors, clamped to [0, 1] like every other similarity (opposed vectors are as
 * unrelated as it gets). Throws an EmbeddingError on a dimension mismatch or a zero vector.
 */
export function embeddingCosine(a: Float64Array, b: Float64Array): number {
  if (a.length !== b.length) throw new EmbeddingError(`dimension mismatch (goal ${a.length}, action ${b.length})`)
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  if (na === 0 || nb === 0) throw new EmbeddingError('zero embedding vector')
  return Math.min(1, Math.max(0, dot / Math.sqrt(na * nb)))
}
