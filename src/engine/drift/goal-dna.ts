/**
 * GoalDNA: a fingerprint of the goal that scores every action without an LLM,
 * records drift events, classifies their severity and follows the similarity trend. The severity
 * bands live in drift-severity.ts and the trend arithmetic in drift-trend.ts.
 */
import { isoAt, wallClock, type Clock } from '../clock.js'
import { DEFAULT_DRIFT_THRESHOLDS, gradeCheck, type DriftSeverity, type Graded } from './drift-severity.js'
import { trendOf, type DriftTrend, type TrendDirection } from './drift-trend.js'
import { createScorer, type GoalScorer, type SimilarityMode } from '../similarity/goal-scorer.js'
import { cutText } from '../similarity/text.js'

// Callers import these from here (and the engine index re-exports this module), so they stay reachable by this path.
export { DEFAULT_DRIFT_THRESHOLD, DEFAULT_DRIFT_THRESHOLDS, SEVERITY_BANDS, severityOf, type DriftSeverity, type Graded } from './drift-severity.js'
export { leastSquaresSlope, TREND_SLOPE_EPSILON, type DriftTrend, type TrendDirection } from './drift-trend.js'

export interface DriftEvent {
  step_number: number
  similarity: number
  /** The action, cut to 200 characters. */
  action_text: string
  severity: DriftSeverity
  timestamp: string
}

/** A step's evidence overruling its text's similarity: on the goal, or neither for nor against it. */
export type Stance = 'on' | 'neutral'

/** The API's answer to one drift check. */
export interface DriftCheck {
  similarity: number
  severity: DriftSeverity
  /** `isDrifting()` after this check. */
  drifting: boolean
  consecutive_drift_count: number
  event: DriftEvent | null
  /**
   * Only on `embeddings` goals: the scorer this check used, `embeddings` (the given cosine) or
   * `enhanced` (its fallback when none was given).
   */
  similarity_mode?: 'embeddings' | 'enhanced'
  /** Why an `embeddings` check fell back (set by the caller that asked the provider). */
  similarity_fallback?: string
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
  driftThreshold?: number
  consecutiveLimit?: number
  historySize?: number
  similarity?: SimilarityMode
  /** Plan steps / todos that enrich the goal's fingerprint (`enhanced` only; see goal-scorer). */
  context?: readonly string[]
  clock?: Clock
  /**
   * Keep the recent drift events (default true). A caller that stores events itself (the sessions
   * service) turns it off: `check` still returns each event, nothing is retained or serialized.
   */
  keepEvents?: boolean
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

export const DEFAULT_CONSECUTIVE_LIMIT = 3
export const DEFAULT_HISTORY_SIZE = 200
export const ACTION_TEXT_MAX = 200

function checkOptions(o: Required<Omit<GoalDNAOptions, 'clock' | 'similarity' | 'context' | 'keepEvents'>>): void {
  if (!(o.driftThreshold >= 0 && o.driftThreshold <= 1)) throw new RangeError('driftThreshold must be in [0, 1]')
  if (!Number.isInteger(o.consecutiveLimit) || o.consecutiveLimit < 0) throw new RangeError('consecutiveLimit must be a non-negative integer')
  if (!Number.isInteger(o.historySize) || o.historySize < 1) throw new RangeError('historySize must be a positive integer')
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
   * Bounded like the history: the newest `historySize` events are kept, so state stays small
   * in long sessions; `total_drift_events` still counts every event ever recorded.
   */
  private events: DriftEvent[] = []

  constructor(goal: string, options: GoalDNAOptions = {}) {
    const mode = options.similarity ?? 'lexical'
    const o = {
      driftThreshold: options.driftThreshold ?? DEFAULT_DRIFT_THRESHOLDS[mode],
      consecutiveLimit: options.consecutiveLimit ?? DEFAULT_CONSECUTIVE_LIMIT,
      historySize: options.historySize ?? DEFAULT_HISTORY_SIZE,
    }
    checkOptions(o)
    this.goalText = goal
    this.driftThreshold = o.driftThreshold
    this.consecutiveLimit = o.consecutiveLimit
    this.historySize = o.historySize
    this.context = [...(options.context ?? [])]
    this.scorer = createScorer(goal, mode, { context: this.context })
    this.clock = options.clock ?? wallClock
    this.keepEvents = options.keepEvents ?? true
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

  /**
   * Similarity of an action to the goal in [0, 1]; 0.5 when either side has no content tokens.
   * On an `embeddings` goal this is the offline `enhanced` fallback.
   */
  similarity(actionText: string): number {
    return this.scorer.similarity(actionText)
  }

  /** The action's similarity graded against the threshold, not recorded (`given`: see `checkDrift`). */
  grade(actionText: string, given?: number): Graded {
    return gradeCheck(this.scorer.mode, this.driftThreshold, given, () => this.scorer.similarity(actionText))
  }

  /**
   * Scores and records one action; returns a drift event when it falls below the threshold.
   * `similarity`, when given, is used instead of the goal's own scorer (see drift-severity.ts `gradeCheck`).
   */
  checkDrift(stepNumber: number, actionText: string, similarity?: number): DriftEvent | null {
    return this.record(stepNumber, actionText, this.grade(actionText, similarity))
  }

  private record(stepNumber: number, actionText: string, g: Graded, stance?: Stance): DriftEvent | null {
    const { similarity } = g
    this.checks++
    this.history.push(similarity)
    // Trimmed in chunks (amortized O(1) per check); readers see only the newest historySize.
    if (this.history.length >= 2 * this.historySize) this.history.splice(0, this.history.length - this.historySize)
    // A fallback check's similarity joins the same history, so a trend spanning a provider outage
    // mixes the two scales (enhanced scores run lower): acceptable for an occasional fallback.
    if (stance === 'neutral') return null
    if (similarity >= g.threshold || stance === 'on') {
      this.consecutive = 0
      return null
    }
    this.consecutive++
    this.driftEventTotal++
    const event: DriftEvent = {
      step_number: stepNumber,
      similarity,
      action_text: cutText(actionText, ACTION_TEXT_MAX),
      severity: g.severity,
      timestamp: isoAt(this.clock()),
    }
    if (!this.keepEvents) return event
    this.events.push(event)
    if (this.events.length >= 2 * this.historySize) this.events.splice(0, this.events.length - this.historySize)
    return event
  }

  /** `checkDrift` shaped as the API's DriftCheck. */
  check(stepNumber: number, actionText: string, similarity?: number): DriftCheck {
    return this.checkGraded(stepNumber, actionText, this.grade(actionText, similarity))
  }

  /**
   * Records an action graded by `grade`. `stance`: what a step's evidence says whatever the text's
   * similarity (step-evidence.ts): `on` the goal counts as no drift, `neutral` as neither (the
   * consecutive count stays); either way its severity is `none` and no event is written.
   */
  checkGraded(stepNumber: number, actionText: string, g: Graded, stance?: Stance): DriftCheck {
    const event = this.record(stepNumber, actionText, g, stance)
    const result: DriftCheck = {
      similarity: g.similarity,
      severity: stance === undefined ? g.severity : 'none',
      drifting: this.isDrifting(),
      consecutive_drift_count: this.consecutive,
      // A retained event is copied so the caller cannot change the history; an unretained one is the caller's.
      event: event === null ? null : this.keepEvents ? copyEvent(event) : event,
    }
    if (this.scorer.mode === 'embeddings') result.similarity_mode = g.mode === 'embeddings' ? 'embeddings' : 'enhanced'
    return result
  }

  /** Sustained drift: the consecutive count **exceeds** `consecutive_limit`, not when it reaches it. */
  isDrifting(): boolean {
    return this.consecutive > this.consecutiveLimit
  }

  getTrend(window = 10): DriftTrend {
    if (!Number.isInteger(window) || window < 1) throw new RangeError('window must be a positive integer')
    return trendOf(this.history.slice(-Math.min(window, this.historySize)), this.consecutive, this.driftEventTotal)
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

  static fromJSON(json: GoalDNAJSON, options: Pick<GoalDNAOptions, 'clock' | 'keepEvents'> = {}): GoalDNA {
    const dna = new GoalDNA(json.goal, {
      driftThreshold: json.drift_threshold,
      consecutiveLimit: json.consecutive_limit,
      historySize: json.history_size,
      similarity: json.similarity,
      ...(json.context === undefined ? {} : { context: json.context }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.keepEvents === undefined ? {} : { keepEvents: options.keepEvents }),
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
