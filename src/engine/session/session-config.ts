/**
 * A goal session's configuration (`SessionConfig` in openapi.yaml): every field optional on input, the
 * defaults below, and the resolved form is what a session stores and returns.
 */
import { DEFAULT_CONSECUTIVE_LIMIT, DEFAULT_DRIFT_THRESHOLDS, DEFAULT_HISTORY_SIZE } from '../drift/goal-dna.js'
import { isSimilarityMode, type SimilarityMode } from '../similarity/goal-scorer.js'
import { REMINDER_DEFAULTS } from '../context/goal-reminder.js'
import { RECITATION_DEFAULTS, type RecitationSource } from '../context/recitation.js'
import { defined } from '../defined.js'
import { copyDetection, detectionProblem, type DetectionConfig } from '../detection/detection-config.js'
import { escalationMode, type EscalationInput } from '../detection/escalation.js'

/** 'custom' needs an in-process builder, so a stored session cannot use it. */
export type SessionRecitationSource = Exclude<RecitationSource, 'custom'>

export interface SessionRecitationConfig {
  frequency: number | 'adaptive'
  sources: SessionRecitationSource[]
  max_tokens: number
}

/** The detection fields (detection-config.ts) are optional: present only when a session set them. */
export interface SessionConfig extends DetectionConfig {
  /**
   * `lexical` is the token + trigram Jaccard fingerprint; `enhanced` the IDF-weighted stem cosine with its own
   * threshold; `embeddings` a provider's embedding cosine (computed by the service), `enhanced` when it fails.
   */
  similarity: SimilarityMode
  drift_threshold: number
  consecutive_limit: number
  history_size: number
  full_cutoff: number
  compact_cutoff: number
  max_pitfalls: number
  max_tried: number
  drift_warning_threshold: number
  recitation: SessionRecitationConfig
  llm_verify: boolean
}

export type SessionConfigInput = Partial<Omit<SessionConfig, 'recitation' | 'escalation'>> & {
  recitation?: Partial<SessionRecitationConfig>
  /** `seed`, the former name of `immediate`, is read as `immediate`. */
  escalation?: EscalationInput
}

export const SESSION_CONFIG_DEFAULTS: SessionConfig = {
  similarity: 'lexical',
  drift_threshold: DEFAULT_DRIFT_THRESHOLDS.lexical,
  consecutive_limit: DEFAULT_CONSECUTIVE_LIMIT,
  history_size: DEFAULT_HISTORY_SIZE,
  full_cutoff: REMINDER_DEFAULTS.full_cutoff,
  compact_cutoff: REMINDER_DEFAULTS.compact_cutoff,
  max_pitfalls: REMINDER_DEFAULTS.max_pitfalls,
  max_tried: REMINDER_DEFAULTS.max_tried,
  drift_warning_threshold: REMINDER_DEFAULTS.drift_warning_threshold,
  recitation: {
    frequency: RECITATION_DEFAULTS.frequency,
    sources: RECITATION_DEFAULTS.sources.filter((s): s is SessionRecitationSource => s !== 'custom'),
    max_tokens: RECITATION_DEFAULTS.max_tokens,
  },
  llm_verify: false,
}

/** A field that makes the configuration unusable, with its path (e.g. `compact_cutoff`). */
export class SessionConfigError extends RangeError {
  readonly field: string
  constructor(field: string, message: string) {
    super(`${field} ${message}`)
    this.name = 'SessionConfigError'
    this.field = field
  }
}

/** Fills the defaults and checks the cross-field rules the per-field schema cannot express. */
export function resolveSessionConfig(input: SessionConfigInput = {}, base: SessionConfig = SESSION_CONFIG_DEFAULTS): SessionConfig {
  const { recitation, escalation, ...rest } = input
  const c: SessionConfig = {
    ...base,
    ...defined(rest),
    ...(escalation === undefined ? {} : { escalation: escalationMode(escalation) }),
    recitation: { ...base.recitation, ...defined(recitation) },
  }
  // A threshold belongs to its mode: choosing a mode without a threshold takes that mode's default.
  if (input.similarity !== undefined && input.drift_threshold === undefined && input.similarity !== base.similarity) {
    c.drift_threshold = DEFAULT_DRIFT_THRESHOLDS[c.similarity]
  }
  if (!isSimilarityMode(c.similarity)) throw new SessionConfigError('similarity', "must be 'lexical', 'enhanced' or 'embeddings'")
  c.recitation.sources = [...new Set(c.recitation.sources)]
  const unit = (field: 'drift_threshold' | 'drift_warning_threshold') => {
    if (!(c[field] >= 0 && c[field] <= 1)) throw new SessionConfigError(field, 'must be in [0, 1]')
  }
  unit('drift_threshold')
  unit('drift_warning_threshold')
  const count = (field: 'consecutive_limit' | 'full_cutoff' | 'compact_cutoff' | 'max_pitfalls' | 'max_tried', min = 0) => {
    if (!(Number.isInteger(c[field]) && c[field] >= min)) throw new SessionConfigError(field, `must be an integer >= ${min}`)
  }
  count('consecutive_limit')
  count('full_cutoff')
  count('compact_cutoff')
  count('max_pitfalls')
  count('max_tried')
  if (!(Number.isInteger(c.history_size) && c.history_size >= 1)) throw new SessionConfigError('history_size', 'must be an integer >= 1')
  if (c.compact_cutoff < c.full_cutoff) throw new SessionConfigError('compact_cutoff', 'must be >= full_cutoff')
  const f = c.recitation.frequency
  if (f !== 'adaptive' && !(Number.isInteger(f) && f >= 0)) {
    throw new SessionConfigError('recitation/frequency', "must be an integer >= 0 or 'adaptive'")
  }
  if (!(Number.isInteger(c.recitation.max_tokens) && c.recitation.max_tokens >= 1)) {
    throw new SessionConfigError('recitation/max_tokens', 'must be an integer >= 1')
  }
  const problem = detectionProblem(c)
  if (problem !== null) throw new SessionConfigError(...problem)
  return { ...c, ...copyDetection(c) }
}

/** A deep copy of a resolved config (plain data: two levels), without structuredClone's fixed cost. */
export function copySessionConfig(c: SessionConfig): SessionConfig {
  return { ...c, recitation: { ...c.recitation, sources: [...c.recitation.sources] }, ...copyDetection(c) }
}
