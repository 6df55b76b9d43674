/**
 * The `embeddings` column of `bench/quality.ts`: the same figures, with every similarity the
 * cosine of the configured provider's vectors (GOALKEEPER_EMBEDDINGS_*). Unique texts are embedded
 * once, in batches; the per-check time is the latency of one single-input call, as a step pays it
 * (goal vector cached). Only run against a provider you mean to send the bench data to.
 */
import type { EmbeddingsConfig } from '../src/config.js'
import { embeddingCosine } from '../src/engine/similarity/embedding-vectors.js'
import { createEmbed } from '../src/providers/embeddings.js'

const BATCH = 64
/** A batch answer takes longer than the one-input calls the server's short timeout is meant for. */
const BATCH_TIMEOUT_MS = 60_000

export interface Pair {
  a: string
  b: string
}

/** Cosine of each pair, embedding each distinct text once. */
export async function pairCosines(config: EmbeddingsConfig, pairs: Pair[]): Promise<number[]> {
  const embed = createEmbed({ ...config, timeoutMs: Math.max(config.timeoutMs, BATCH_TIMEOUT_MS) })
  const texts = [...new Set(pairs.flatMap((p) => [p.a, p.b]))]
  const vectors = new Map<string, Float64Array>()
  for (let i = 0; i < texts.length; i += BATCH) {
    const chunk = texts.slice(i, i + BATCH)
    const vs = await embed(chunk)
    chunk.forEach((t, j) => vectors.set(t, vs[j]!))
  }
  return pairs.map((p) => embeddingCosine(vectors.get(p.a)!, vectors.get(p.b)!))
}

/** Median wall µs of `rounds` single-input calls (what a step waits for once its goal vector is cached). */
export async function microsPerCall(config: EmbeddingsConfig, texts: string[], rounds = 30): Promise<number> {
  const embed = createEmbed(config)
  const times: number[] = []
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint()
    await embed([texts[r % texts.length]!])
    times.push(Number(process.hrtime.bigint() - t0) / 1000)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!
}
