/** Settings that govern delivery, mapped from config (GOALKEEPER_WEBHOOK_*). */
export interface DeliverySettings {
  /** Seconds to wait before attempt 2, 3, ...; its length + 1 is the total number of attempts. */
  retrySchedule: number[]
  timeoutMs: number
  allowPrivateUrls: boolean
  /** An endpoint failing without a single success for this long is disabled. */
  disableAfterHours: number
}

export const DEFAULT_DELIVERY_SETTINGS: DeliverySettings = {
  retrySchedule: [5, 300, 1800, 7200, 18000, 36000, 36000],
  timeoutMs: 15_000,
  allowPrivateUrls: false,
  disableAfterHours: 120,
}

/** How one attempt ended, as the policy sees it. */
export type AttemptOutcome =
  | { kind: 'success' }
  | { kind: 'gone' } // 410: the receiver asks us to stop; the endpoint is disabled
  | { kind: 'retry'; retryAfterMs: number | null }

/** 2xx succeeds; 410 disables; everything else (3xx included: redirects are not followed) retries. */
export function classifyStatus(status: number, retryAfter: string | null, nowMs: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'success' }
  if (status === 410) return { kind: 'gone' }
  return { kind: 'retry', retryAfterMs: parseRetryAfter(retryAfter, nowMs) }
}

// Never wait longer than a day because a receiver said so.
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000

/** `Retry-After` as delta-seconds or an HTTP date, in ms from now; null when absent or unparsable. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (value === null || value === undefined) return null
  const v = value.trim()
  if (v === '') return null
  let ms: number
  if (/^\d+$/.test(v)) ms = Number(v) * 1000
  else {
    const at = Date.parse(v)
    if (Number.isNaN(at)) return null
    ms = at - nowMs
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS)
}

/**
 * When the next attempt may run after `attempt` (1-based) failed, or null when the schedule is
 * exhausted. `Retry-After` replaces the scheduled delay; scheduled delays get ±10 % jitter so
 * deliveries that failed together do not retry in one herd.
 */
export function nextAttemptAt(
  attempt: number,
  outcome: { retryAfterMs: number | null },
  nowMs: number,
  settings: Pick<DeliverySettings, 'retrySchedule'>,
  random: () => number = Math.random,
): number | null {
  const scheduled = settings.retrySchedule[attempt - 1]
  if (scheduled === undefined) return null
  if (outcome.retryAfterMs !== null) return nowMs + outcome.retryAfterMs
  const jitter = 1 + (random() * 2 - 1) * 0.1
  return nowMs + Math.round(scheduled * 1000 * jitter)
}

/** True when an endpoint that has failed since `failingSince` should now be disabled. */
export function failingTooLong(failingSince: number | null, nowMs: number, disableAfterHours: number): boolean {
  return failingSince !== null && nowMs - failingSince >= disableAfterHours * 3_600_000
}
