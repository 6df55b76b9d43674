/**
 * The similarity trend over recent drift checks: a least-squares slope read as a
 * direction. Pure arithmetic over a history window, kept apart from the GoalDNA that records it.
 */

export type TrendDirection = 'improving' | 'worsening' | 'stable'

export interface DriftTrend {
  direction: TrendDirection
  average_similarity: number
  min_similarity: number
  max_similarity: number
  consecutive_drifts: number
  total_drift_events: number
  /** Least-squares slope of similarity per check; positive = improving. */
  trend_slope: number
}

/** Slopes beyond ±0.02 per check count as a direction; flatter is `stable`. */
export const TREND_SLOPE_EPSILON = 0.02

/** Ordinary least-squares slope of ys against their index 0..n-1; 0 for fewer than 2 points. */
export function leastSquaresSlope(ys: readonly number[]): number {
  const n = ys.length
  if (n < 2) return 0
  const meanX = (n - 1) / 2
  let meanY = 0
  for (const y of ys) meanY += y
  meanY /= n
  let num = 0
  let den = 0
  for (let i = 0; i < n; i++) {
    num += (i - meanX) * (ys[i]! - meanY)
    den += (i - meanX) * (i - meanX)
  }
  return num / den
}

function directionOf(slope: number): TrendDirection {
  if (slope > TREND_SLOPE_EPSILON) return 'improving'
  if (slope < -TREND_SLOPE_EPSILON) return 'worsening'
  return 'stable'
}

/** The trend of `recent` similarities (oldest first), with the drift counters it reports alongside. */
export function trendOf(recent: readonly number[], consecutiveDrifts: number, totalDriftEvents: number): DriftTrend {
  const slope = leastSquaresSlope(recent)
  let sum = 0
  for (const s of recent) sum += s
  return {
    direction: directionOf(slope),
    average_similarity: recent.length === 0 ? 0 : sum / recent.length,
    min_similarity: recent.length === 0 ? 0 : Math.min(...recent),
    max_similarity: recent.length === 0 ? 0 : Math.max(...recent),
    consecutive_drifts: consecutiveDrifts,
    total_drift_events: totalDriftEvents,
    trend_slope: slope,
  }
}
