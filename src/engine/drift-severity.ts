/**
 * Drift thresholds and severity bands per similarity mode: calibration data plus the one function
 * that grades a similarity against them, apart from the GoalDNA state machine that uses them.
 */
import type { SimilarityMode } from './goal-scorer.js'

export type DriftSeverity = 'none' | 'low' | 'moderate' | 'high' | 'critical'

/** The seed's default, which belongs to the `lexical` mode. */
export const DEFAULT_DRIFT_THRESHOLD = 0.15
/**
 * Default threshold per mode. `enhanced` (0.1) is calibrated on the τ-bench airline bench slice
 * (its 1,000 on-task steps, held apart by customer from the held-out slice): the score below
 * which 20% of on-task steps fall (0.1003), rounded down to a multiple of 0.005. A 20% per-check
 * false-alarm rate keeps a false `is_drifting()` (4 drifts in a row) near 0.2%; at it 55% of
 * off-task steps are flagged, where `lexical` at 0.15 flags 87% of on-task steps.
 * `bench/quality.ts` prints both rates. Re-derive it the same way whenever the scorer changes.
 */
export const DEFAULT_DRIFT_THRESHOLDS: Readonly<Record<SimilarityMode, number>> = { lexical: DEFAULT_DRIFT_THRESHOLD, enhanced: 0.1 }
/**
 * Severity bands as fractions of the threshold t: ≥ t none, ≥ b0·t low, ≥ b1·t moderate,
 * ≥ b2·t high, else critical. `enhanced` lifts low scores of short texts toward 0.15 (see
 * `liftLowEvidence`), so its scores rarely fall below 0.4·t and the seed's fractions would leave
 * high and critical nearly empty. [0.8, 0.6, 0.4] keeps every band populated on the same
 * τ-bench slice, with off-task / on-task ratios 0.6 (none), 1.8 (low), 5.1 (moderate),
 * 4.7 (high), 4.5 (critical): low is a weak signal, moderate and worse a strong one.
 */
export const SEVERITY_BANDS: Readonly<Record<SimilarityMode, readonly [number, number, number]>> = {
  lexical: [0.7, 0.4, 0.2],
  enhanced: [0.8, 0.6, 0.4],
}

/** Severity of a similarity relative to the threshold t: ≥ t none, ≥ 0.7t low, ≥ 0.4t moderate, ≥ 0.2t high. */
export function severityOf(
  similarity: number,
  threshold: number,
  bands: readonly [number, number, number] = SEVERITY_BANDS.lexical,
): DriftSeverity {
  if (similarity >= threshold) return 'none'
  if (similarity >= threshold * bands[0]) return 'low'
  if (similarity >= threshold * bands[1]) return 'moderate'
  if (similarity >= threshold * bands[2]) return 'high'
  return 'critical'
}
