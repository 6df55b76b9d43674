/**
 * GoalDNA (seed 003): a fingerprint of the goal that scores every action without an LLM,
 * records drift events, classifies their severity and follows the similarity trend.
 */
import { isoAt, wallClock, type Clock } from './clock.js'
import { createScorer, type GoalScorer, type SimilarityMode } from './goal-scorer.js'

export type DriftSeverity = 'none' | 'low' | 'moderate' | 'high' | 'critical'
export type TrendDirection = 'improving' | 'worsening' | 'stable'

export interface DriftEvent {
  step_number: number
  similarity: number
  /** The action, cut to 200 characters. */
  action_text: string
  severity: DriftSeverity
  timestamp: string
}

/** The API's answer to one drift check. */
export interface DriftCheck {
  similarity: number
  severity: DriftSeverity
  /** `isDrifting()` after this check. */
  drifting: boolean
  consecutive_drift_count: number
  event: DriftEvent | null
}

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

export interface GoalDNASummary {
  goal: string
  similarity_mode: SimilarityMode
  token_count: number
  trigram_count: number
  total_checks: number
  drift_events: number
  trend_direction: TrendDirection
  consecutive_drift_count: number
  is_drifting: boolean
  drift_threshold: number
}

export interface GoalDNAOptions {
  drift_threshold?: number
  consecutive_limit?: number
  history_size?: number
  similarity?: SimilarityMode
  /** Plan steps / todos that enrich the goal's fingerprint (`enhanced` only; see goal-scorer). */
  context?: readonly string[]
  clock?: Clock
  /**
   * Keep the recent drift events (default true). A caller that stores events itself (the sessions
   * service) turns it off: `check` still returns each event, nothing is retained or serialized.
   */
  keep_events?: boolean
}

export interface GoalDNAJSON {
  goal: string
  drift_threshold: number
  consecutive_limit: number
  history_size: number
  similarity: SimilarityMode
  /** Present when the fingerprint was built with plan / todo context. */
  context?: string[]
  consecutive_drift_count: number
  total_checks: number
  total_drift_events: number
  /** Similarities of the most recent checks, oldest first (at most `history_size`). */
  history: number[]
  drift_events: DriftEvent[]
}

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
export const DEFAULT_CONSECUTIVE_LIMIT = 3
export const DEFAULT_HISTORY_SIZE = 200
export const ACTION_TEXT_MAX = 200
/** Slopes beyond ±0.02 per check count as a direction (seed 003). */
export const TREND_SLOPE_EPSILON = 0.02

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

function checkOptions(o: Required<Omit<GoalDNAOptions, 'clock' | 'similarity' | 'context' | 'keep_events'>>): void {
  if (!(o.drift_threshold >= 0 && o.drift_threshold <= 1)) throw new RangeError('drift_threshold must be in [0, 1]')
  if (!Number.isInteger(o.consecutive_limit) || o.consecutive_limit < 0)
    throw new RangeError('consecutive_limit must be a non-negative integer')
  if (!Number.isInteger(o.history_size) || o.history_size < 1) throw new RangeError('history_size must be a positive integer')
}

export class GoalDNA {
  readonly goalText: string
  readonly driftThreshold: number
  readonly consecutiveLimit: number
  readonly historySize: number
  private readonly scorer: GoalScorer
  private readonly context: readonly string[]
  private readonly clock: Clock
  private readonly keepEvents: boolean
  private consecutive = 0
  private checks = 0
  private driftEventTotal = 0
  private history: number[] = []
  /**
   * Bounded like the history: the newest `history_size` events are kept, so state stays small
   * in long sessions; `total_drift_events` still counts every event ever recorded.
   */
  private events: DriftEvent[] = []

  constructor(goal: string, options: GoalDNAOptions = {}) {
    const mode = options.similarity ?? 'lexical'
    const o = {
      drift_threshold: options.drift_threshold ?? DEFAULT_DRIFT_THRESHOLDS[mode],
      consecutive_limit: options.consecutive_limit ?? DEFAULT_CONSECUTIVE_LIMIT,
      history_size: options.history_size ?? DEFAULT_HISTORY_SIZE,
    }
    checkOptions(o)
    this.goalText = goal
    this.driftThreshold = o.drift_threshold
    this.consecutiveLimit = o.consecutive_limit
    this.historySize = o.history_size
    this.context = [...(options.context ?? [])]
    this.scorer = createScorer(goal, mode, { context: this.context })
    this.clock = options.clock ?? wallClock
    this.keepEvents = options.keep_events ?? true
  }

  get tokens(): ReadonlySet<string> {
    return this.scorer.tokens
  }

  get trigrams(): ReadonlySet<string> {
    return this.scorer.trigrams
  }

  get similarityMode(): SimilarityMode {
    return this.scorer.mode
  }

  get consecutiveDriftCount(): number {
    return this.consecutive
  }

  get totalChecks(): number {
    return this.checks
  }

  /** Similarity of an action to the goal in [0, 1]; 0.5 when either side has no content tokens. */
  similarity(actionText: string): number {
    return this.scorer.similarity(actionText)
  }

  /** Scores and records one action; returns a drift event when it falls below the threshold. */
  checkDrift(stepNumber: number, actionText: string): DriftEvent | null {
    const similarity = this.scorer.similarity(actionText)
    this.checks++
    this.history.push(similarity)
    // Trimmed in chunks (amortized O(1) per check); readers see only the newest historySize.
    if (this.history.length >= 2 * this.historySize) this.history.splice(0, this.history.length - this.historySize)
    if (similarity >= this.driftThreshold) {
      this.consecutive = 0
      return null
    }
    this.consecutive++
    this.driftEventTotal++
    const event: DriftEvent = {
      step_number: stepNumber,
      similarity,
      action_text: actionText.slice(0, ACTION_TEXT_MAX),
      severity: severityOf(similarity, this.driftThreshold, SEVERITY_BANDS[this.scorer.mode]),
      timestamp: isoAt(this.clock()),
    }
    if (!this.keepEvents) return event
    this.events.push(event)
    if (this.events.length >= 2 * this.historySize) this.events.splice(0, this.events.length - this.historySize)
    return event
  }

  /** `checkDrift` shaped as the API's DriftCheck. */
  check(stepNumber: number, actionText: string): DriftCheck {
    const event = this.checkDrift(stepNumber, actionText)
    const similarity = this.history[this.history.length - 1]!
    return {
      similarity,
      severity: severityOf(similarity, this.driftThreshold, SEVERITY_BANDS[this.scorer.mode]),
      drifting: this.isDrifting(),
      consecutive_drift_count: this.consecutive,
      // A retained event is copied so the caller cannot change the history; an unretained one is the caller's.
      event: event === null ? null : this.keepEvents ? copyEvent(event) : event,
    }
  }

  /** Sustained drift: the consecutive count **exceeds** `consecutive_limit` (seed 003's wording). */
  isDrifting(): boolean {
    return this.consecutive > this.consecutiveLimit
  }

  getTrend(window = 10): DriftTrend {
    if (!Number.isInteger(window) || window < 1) throw new RangeError('window must be a positive integer')
    const recent = this.history.slice(-Math.min(window, this.historySize))
    const slope = leastSquaresSlope(recent)
    let sum = 0
    for (const s of recent) sum += s
    return {
      direction: directionOf(slope),
      average_similarity: recent.length === 0 ? 0 : sum / recent.length,
      min_similarity: recent.length === 0 ? 0 : Math.min(...recent),
      max_similarity: recent.length === 0 ? 0 : Math.max(...recent),
      consecutive_drifts: this.consecutive,
      total_drift_events: this.driftEventTotal,
      trend_slope: slope,
    }
  }

  /** The retained drift events, oldest first (a copy). */
  getDriftEvents(): DriftEvent[] {
    return this.events.slice(-this.historySize).map(copyEvent)
  }

  getSummary(): GoalDNASummary {
    return {
      goal: this.goalText,
      similarity_mode: this.scorer.mode,
      token_count: this.scorer.tokens.size,
      trigram_count: this.scorer.trigrams.size,
      total_checks: this.checks,
      drift_events: this.driftEventTotal,
      trend_direction: this.getTrend().direction,
      consecutive_drift_count: this.consecutive,
      is_drifting: this.isDrifting(),
      drift_threshold: this.driftThreshold,
    }
  }

  /** Clears the consecutive counter, e.g. after a replan. */
  resetConsecutive(): void {
    this.consecutive = 0
  }

  toJSON(): GoalDNAJSON {
    return {
      goal: this.goalText,
      drift_threshold: this.driftThreshold,
      consecutive_limit: this.consecutiveLimit,
      history_size: this.historySize,
      similarity: this.scorer.mode,
      ...(this.context.length > 0 ? { context: [...this.context] } : {}),
      consecutive_drift_count: this.consecutive,
      total_checks: this.checks,
      total_drift_events: this.driftEventTotal,
      history: this.history.slice(-this.historySize),
      drift_events: this.getDriftEvents(),
    }
  }

  static fromJSON(json: GoalDNAJSON, options: Pick<GoalDNAOptions, 'clock' | 'keep_events'> = {}): GoalDNA {
    const dna = new GoalDNA(json.goal, {
      drift_threshold: json.drift_threshold,
      consecutive_limit: json.consecutive_limit,
      history_size: json.history_size,
      similarity: json.similarity,
      ...(json.context === undefined ? {} : { context: json.context }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.keep_events === undefined ? {} : { keep_events: options.keep_events }),
    })
    dna.consecutive = json.consecutive_drift_count
    dna.checks = json.total_checks
    dna.driftEventTotal = json.total_drift_events
    dna.history = json.history.slice(-dna.historySize)
    dna.events = dna.keepEvents ? json.drift_events.slice(-dna.historySize).map(copyEvent) : []
    return dna
  }
}

function copyEvent(e: DriftEvent): DriftEvent {
  return {
    step_number: e.step_number,
    similarity: e.similarity,
    action_text: e.action_text,
    severity: e.severity,
    timestamp: e.timestamp,
  }
}
