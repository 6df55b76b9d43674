import { describe, expect, it } from 'vitest'
import { embeddingCosine, EmbeddingError, parseEmbeddings } from '../../src/engine/similarity/embedding-vectors.js'
import { GoalDNA } from '../../src/engine/drift/goal-dna.js'
import { GoalSession } from '../../src/engine/session/goal-session.js'
import { resolveSessionConfig } from '../../src/engine/session/session-config.js'

const GOAL = 'Build a REST API for user management with authentication'

describe('GoalDNA with an external similarity (embeddings)', () => {
  it('grades a given cosine against the session threshold (default 0.25) and its bands', () => {
    const dna = new GoalDNA(GOAL, { similarity: 'embeddings' })
    expect(dna.driftThreshold).toBe(0.25)
    expect(dna.check(1, 'anything', 0.3)).toMatchObject({ similarity: 0.3, severity: 'none', event: null, similarity_mode: 'embeddings' })
    // 0.8 × 0.25 = 0.2, 0.6 × 0.25 = 0.15, 0.4 × 0.25 = 0.1
    expect(dna.check(2, 'anything', 0.21).severity).toBe('low')
    expect(dna.check(3, 'anything', 0.16).severity).toBe('moderate')
    expect(dna.check(4, 'anything', 0.11).severity).toBe('high')
    const last = dna.check(5, 'anything', 0.05)
    expect(last).toMatchObject({ severity: 'critical', consecutive_drift_count: 4, drifting: true })
    expect(last.event).toMatchObject({ step_number: 5, similarity: 0.05, severity: 'critical' })
    // Negative cosines are clamped like every similarity; non-numbers are refused.
    expect(dna.check(6, 'anything', -0.4).similarity).toBe(0)
    expect(() => dna.check(7, 'anything', Number.NaN)).toThrow(RangeError)
  })

  it('an explicit drift_threshold applies to the given cosine', () => {
    const dna = new GoalDNA(GOAL, { similarity: 'embeddings', driftThreshold: 0.78 })
    expect(dna.check(1, 'x', 0.75)).toMatchObject({ severity: 'low', consecutive_drift_count: 1 })
  })

  it('without a cosine it falls back to enhanced, graded at the enhanced default threshold', () => {
    const action = 'implement the user management endpoints with authentication middleware'
    const ref = new GoalDNA(GOAL, { similarity: 'enhanced' }).check(1, action)
    const dna = new GoalDNA(GOAL, { similarity: 'embeddings', driftThreshold: 0.9 })
    const got = dna.check(1, action)
    expect(got).toMatchObject({ similarity: ref.similarity, severity: ref.severity, similarity_mode: 'enhanced' })
    expect(got.consecutive_drift_count).toBe(ref.consecutive_drift_count)
  })

  it('round-trips through JSON and reports similarity_mode only on embeddings goals', () => {
    const dna = new GoalDNA(GOAL, { similarity: 'embeddings' })
    dna.check(1, 'x', 0.1)
    const back = GoalDNA.fromJSON(dna.toJSON())
    expect(back.similarityMode).toBe('embeddings')
    expect(back.getTrend().average_similarity).toBe(0.1)
    expect(new GoalDNA(GOAL, { similarity: 'enhanced' }).check(1, 'x', 0.5).similarity_mode).toBeUndefined()
  })

  it('a session passes a step cosine through to its drift check', () => {
    const s = new GoalSession({ goal: GOAL, config: { similarity: 'embeddings' } })
    expect(s.config.drift_threshold).toBe(0.25)
    expect(s.step('browse reddit', '', 0.05).drift).toMatchObject({ similarity: 0.05, severity: 'critical', similarity_mode: 'embeddings' })
    expect(s.driftCheck('read the news', 1, 0.6).result).toMatchObject({ similarity: 0.6, severity: 'none' })
  })

  it('session config accepts embeddings and takes its default threshold unless one is given', () => {
    expect(resolveSessionConfig({ similarity: 'embeddings' }).drift_threshold).toBe(0.25)
    expect(resolveSessionConfig({ similarity: 'embeddings', drift_threshold: 0.7 }).drift_threshold).toBe(0.7)
  })
})

describe('embedding vectors', () => {
  it('reads data[].embedding in index order and rejects malformed answers', () => {
    const vs = parseEmbeddings(
      {
        data: [
          { index: 1, embedding: [0, 1] },
          { index: 0, embedding: [1, 0] },
        ],
      },
      2,
    )
    expect(vs.map((v) => [...v])).toEqual([
      [1, 0],
      [0, 1],
    ])
    for (const bad of [null, {}, { data: [] }, { data: [{ embedding: [] }] }, { data: [{ embedding: [1, 'x'] }] }, { data: [{}] }]) {
      expect(() => parseEmbeddings(bad, 1)).toThrow(EmbeddingError)
    }
  })

  it('cosine in [0, 1]; a dimension mismatch or zero vector throws', () => {
    const v = (...xs: number[]) => Float64Array.from(xs)
    expect(embeddingCosine(v(1, 2, 3), v(2, 4, 6))).toBeCloseTo(1, 12)
    expect(embeddingCosine(v(1, 0), v(1, 1))).toBeCloseTo(Math.SQRT1_2, 12)
    expect(embeddingCosine(v(1, 0), v(-1, 0))).toBe(0)
    expect(() => embeddingCosine(v(1, 0), v(1, 0, 0))).toThrow(/dimension mismatch \(goal 2, action 3\)/)
    expect(() => embeddingCosine(v(0, 0), v(1, 0))).toThrow(/zero/)
  })
})
