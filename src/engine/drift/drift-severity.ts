/**
 * Drift thresholds and severity bands per similarity mode: calibration data plus the functions
 * that grade a similarity against them, apart from the GoalDNA state machine that uses them.
 */
import type { SimilarityMode } from '../similarity/goal-scorer.js'

export type DriftSeverity = 'none' | 'low' | 'moderate' | 'high' | 'critical'

/** The default drift threshold, which belongs to the `lexical` mode. */
export const DEFAULT_DRIFT_THRESHOLD = 0.15
/**
 * Default threshold per mode. `enhanced` (0.115) is calibrated on the τ-bench airline bench slice
 * (its 1,000 on-task steps, held apart by customer from the held-out slice): the score below
 * which 20% of on-task steps fall (0.1162), rounded down to a multiple of 0.005. A 20% per-check
 * false-alarm rate keeps a false `is_drifting()` (4 drifts in a row) near 0.2%; many on-task
 * scores sit at the lifted neutral value just above it, so 12% are flagged at it, and 54% of
 * off-task steps, where `lexical` at 0.15 flags 87% of on-task steps.
 * `bench/quality.ts` prints both rates. Re-derive it the same way whenever the scorer changes.
 */
export const DEFAULT_DRIFT_THRESHOLDS: Readonly<Record<SimilarityMode, number>> = {
  lexical: DEFAULT_DRIFT_THRESHOLD,
  enhanced: 0.115,
  embeddings: 0.25,
}
/*
 * `embeddings` (0.25) is not calibrated here (no provider offline): it sits between the cosines
 * that current embedding models give unrelated texts and on-topic ones. For OpenAI's
 * text-embedding-3-* and sentence-transformers' MiniLM/MPNet models, unrelated sentences land
 * around 0.0–0.2 and texts about the same task around 0.35–0.7. Models with a compressed range
 * (text-embedding-ada-002: unrelated ≈ 0.7) need `drift_threshold` set per session (≈ 0.78);
 * `npm run bench:quality` with GOALKEEPER_EMBEDDINGS_URL prints the rates to calibrate it with.
 */
/**
 * Severity bands as fractions of the threshold t: ≥ t none, ≥ b0·t low, ≥ b1·t moderate,
 * ≥ b2·t high, else critical. `enhanced` lifts low scores toward 0.12 (see `liftLowEvidence`),
 * just above 0.8·t, so its scores rarely fall far below t and wider fractions would leave
 * moderate, high and critical nearly empty. [0.95, 0.9, 0.8] keeps every band populated on the
 * same τ-bench slice, with off-task / on-task ratios 0.5 (none), 2.5 (low), 5.6 (moderate),
 * 14 (high), 30 (critical): low is a weak signal, moderate and worse a strong one.
 */
export const SEVERITY_BANDS: Readonly<Record<SimilarityMode, readonly [number, number, number]>> = {
  lexical: [0.7, 0.4, 0.2],
  enhanced: [0.95, 0.9, 0.8],
  // Unrelated texts cluster just under the threshold and rarely reach 0 (cosines seldom go
  // negative): at 0.25 the bands are low ≥ 0.2, moderate ≥ 0.15, high ≥ 0.1, critical below.
  embeddings: [0.8, 0.6, 0.4],
}

/** Severity of a similarity relative to the threshold t: ≥ t none, ≥ 0.7t low, ≥ 0.4t moderate, ≥ 0.2t high. */
export function severityOf(similarity: number, threshold: number, bands: readonly [number, number, number] = SEVERITY_BANDS.lexical): DriftSeverity {
  if (similarity >= threshold) return 'none'
  if (similarity >= threshold * bands[0]) return 'low'
  if (similarity >= threshold * bands[1]) return 'moderate'
  if (similarity >= threshold * bands[2]) return 'high'
  return 'critical'
}

/** A check's similarity, the threshold and severity it is graded to, and the mode that scored it. */
export interface Graded {
  similarity: number
  threshold: number
  severity: DriftSeverity
  mode: SimilarityMode
}

function graded(similarity: number, threshold: number, mode: SimilarityMode): Graded {
  return { similarity, threshold, severity: severityOf(similarity, threshold, SEVERITY_BANDS[mode]), mode }
}

/**
 * How a check is graded. A given similarity (an embeddings cosine) is clamped to [0, 1] and graded
 * against the goal's threshold; without one an `embeddings` goal falls back to its `enhanced`
 * scorer (`score`), graded as an `enhanced` goal would be, by that mode's default threshold, since
 * the session's threshold is on the provider's cosine scale.
 */
export function gradeCheck(mode: SimilarityMode, threshold: number, given: number | undefined, score: () => number): Graded {
  if (given !== undefined) {
    if (!Number.isFinite(given)) throw new RangeError('similarity must be a finite number')
    return graded(Math.min(1, Math.max(0, given)), threshold, mode)
  }
  if (mode === 'embeddings') return graded(score(), DEFAULT_DRIFT_THRESHOLDS.enhanced, 'enhanced')
  return graded(score(), threshold, mode)
}
