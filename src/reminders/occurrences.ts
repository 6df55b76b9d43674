/**
 * Occurrence math for reminder triggers (pure; shared by the reminders service and the ticker).
 * Recurring triggers are standard 5-field cron expressions evaluated by croner in an IANA
 * timezone. DST: a local time that falls in a spring-forward gap fires at the first valid instant
 * after it (02:30 on 2026-03-08 in New York fires at 03:00 EDT); a time that occurs twice in a
 * fall-back overlap fires once, at its first occurrence.
 */
import { Cron } from 'croner'
import { parseInstant } from '../engine/clock.js'

export type ReminderTrigger = { type: 'scheduled'; at: string } | { type: 'recurring'; cron: string; timezone?: string | null } | { type: 'context'; pattern: string }

/**
 * A trigger value the occurrence maths cannot use: `field` names it within the trigger (`at`,
 * `cron`, `timezone`; the agent's settings timezone is refused as `timezone` too). It knows
 * nothing of HTTP: whoever took the value from a request maps it to a problem at that value's path.
 */
export class InvalidTrigger extends Error {
  readonly field: 'at' | 'cron' | 'timezone'
  /** A few words for errors[].message; `message` is the sentence for `detail`. */
  readonly reason: string
  /**
   * True when the value is not in the field's format at all (a date that is none, a cron with
   * three fields or a 61st minute); false when it is well-formed but unusable (a cron that never
   * fires, an unknown timezone).
   */
  readonly malformed: boolean

  constructor(field: InvalidTrigger['field'], message: string, reason: string, malformed: boolean) {
    super(message)
    this.name = 'InvalidTrigger'
    this.field = field
    this.reason = reason
    this.malformed = malformed
  }
}

const timezoneCache = new Map<string, string>()

/** The canonical IANA name of `tz`; InvalidTrigger('timezone') for an unknown one. */
export function validateTimezone(tz: string): string {
  const hit = timezoneCache.get(tz)
  if (hit !== undefined) return hit
  let canonical: string
  try {
    canonical = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone
  } catch {
    throw new InvalidTrigger('timezone', `Unknown timezone '${tz}': use an IANA name such as 'Europe/Paris' or 'UTC'.`, 'unknown IANA timezone', false)
  }
  if (timezoneCache.size > 1000) timezoneCache.clear()
  timezoneCache.set(tz, canonical)
  return canonical
}

const cronCache = new Map<string, Cron>()

function cronFor(expr: string, tz: string): Cron {
  const key = `${tz}\u0000${expr}`
  let job = cronCache.get(key)
  if (!job) {
    // paused: croner only computes times here, it never schedules a timer.
    job = new Cron(expr, { timezone: tz, paused: true, mode: '5-part' })
    if (cronCache.size > 2000) cronCache.clear()
    cronCache.set(key, job)
  }
  return job
}

/**
 * Checks a cron expression (5 fields: minute hour day-of-month month day-of-week) and that it
 * ever fires; returns it trimmed with single spaces. Throws InvalidTrigger('cron') saying what is wrong.
 */
export function validateCron(expr: string, tz = 'UTC'): string {
  const normalized = expr.trim().split(/\s+/).join(' ')
  const fields = normalized === '' ? 0 : normalized.split(' ').length
  // Counted here: croner's own message offers five, six or seven parts, which this service does not take.
  // A lone '@daily'-style nickname is croner's to accept or refuse.
  if (fields !== 5 && !(fields === 1 && normalized.startsWith('@'))) throw wrongFieldCount(expr, fields)
  let job: Cron
  try {
    job = cronFor(normalized, validateTimezone(tz))
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^CronPattern:\s*/, '').replace(/\.$/, '') : String(err)
    if (/parts are required|requires exactly/.test(why)) throw wrongFieldCount(expr, fields)
    throw new InvalidTrigger('cron', `Invalid cron expression '${expr}': ${why} (${FIVE_FIELDS}).`, why, true)
  }
  // croner searches years ahead; null means the expression can never match (e.g. 30 February).
  if (job.nextRun(new Date(0)) === null) {
    throw new InvalidTrigger('cron', `Cron expression '${expr}' never fires (no date matches it).`, 'never fires', false)
  }
  return normalized
}

const FIVE_FIELDS = 'a cron expression here has exactly 5 fields: minute hour day-of-month month day-of-week'

function wrongFieldCount(expr: string, fields: number) {
  const n = `${fields} field${fields === 1 ? '' : 's'}`
  return new InvalidTrigger('cron', `Invalid cron expression '${expr}': it has ${n}; ${FIVE_FIELDS}.`, `${n}, expected 5`, true)
}

/** A scheduled trigger's `at` (parseInstant's rule); InvalidTrigger('at') for anything else. */
export function triggerInstant(at: string): number {
  const ms = parseInstant(at)
  if (ms === undefined) {
    throw new InvalidTrigger('at', `'${at}' is not an ISO-8601 date-time with a timezone offset (e.g. 2026-11-22T09:00:00Z).`, 'must match format "date-time"', true)
  }
  return ms
}

/** The first fire time strictly after `afterMs`, or null (context triggers, past one-shots, exhausted crons). */
export function nextOccurrence(trigger: ReminderTrigger, afterMs: number, tz = 'UTC'): number | null {
  switch (trigger.type) {
    case 'scheduled': {
      const at = triggerInstant(trigger.at)
      return at > afterMs ? at : null
    }
    case 'recurring': {
      const next = cronFor(trigger.cron, trigger.timezone ?? tz).nextRun(new Date(afterMs))
      return next ? next.getTime() : null
    }
    case 'context':
      return null
  }
}

/** Up to `count` fire times at or after `fromMs`, ascending (epoch ms). */
export function occurrences(trigger: ReminderTrigger, fromMs: number, count: number, tz = 'UTC'): number[] {
  if (count <= 0) return []
  switch (trigger.type) {
    case 'scheduled': {
      const at = triggerInstant(trigger.at)
      return at >= fromMs ? [at] : []
    }
    case 'recurring':
      // nextRuns is exclusive of its start, so step back 1 ms to include a run exactly at `fromMs`.
      return cronFor(trigger.cron, trigger.timezone ?? tz)
        .nextRuns(count, new Date(fromMs - 1))
        .map((d) => d.getTime())
    case 'context':
      return []
  }
}
