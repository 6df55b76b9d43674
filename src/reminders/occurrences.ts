/**
 * Occurrence math for reminder triggers (pure; shared by the reminders service and the ticker).
 * Recurring triggers are standard 5-field cron expressions evaluated by croner in an IANA
 * timezone. DST: a local time that falls in a spring-forward gap fires at the first valid instant
 * after it (02:30 on 2026-03-08 in New York fires at 03:00 EDT); a time that occurs twice in a
 * fall-back overlap fires once, at its first occurrence.
 */
import { Cron } from 'croner'
import { fieldPath, unprocessable } from '../errors.js'

export type ReminderTrigger =
  | { type: 'scheduled'; at: string }
  | { type: 'recurring'; cron: string; timezone?: string | null }
  | { type: 'context'; pattern: string }

const timezoneCache = new Map<string, string>()

// Default error paths, built once (the scheduler parses on every tick).
const TIMEZONE_PATH = fieldPath('body', 'timezone')
const CRON_PATH = fieldPath('body', 'trigger', 'cron')
const AT_PATH = fieldPath('body', 'trigger', 'at')

/** The canonical IANA name of `tz`, or a 422 naming the bad value; `path` is the errors[] path. */
export function validateTimezone(tz: string, path = TIMEZONE_PATH): string {
  const hit = timezoneCache.get(tz)
  if (hit !== undefined) return hit
  let canonical: string
  try {
    canonical = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone
  } catch {
    throw unprocessable(`Unknown timezone '${tz}': use an IANA name such as 'Europe/Paris' or 'UTC'.`, [
      { path, message: 'unknown IANA timezone' },
    ])
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
 * ever fires; returns it trimmed with single spaces. Throws 422 saying what is wrong.
 */
export function validateCron(expr: string, tz = 'UTC', path = CRON_PATH): string {
  const normalized = expr.trim().split(/\s+/).join(' ')
  const fields = normalized === '' ? 0 : normalized.split(' ').length
  // Counted here: croner's own message offers five, six or seven parts, which this service does not take.
  // A lone '@daily'-style nickname is croner's to accept or refuse.
  if (fields !== 5 && !(fields === 1 && normalized.startsWith('@'))) throw wrongFieldCount(expr, fields, path)
  let job: Cron
  try {
    job = cronFor(normalized, validateTimezone(tz))
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^CronPattern:\s*/, '').replace(/\.$/, '') : String(err)
    if (/parts are required|requires exactly/.test(why)) throw wrongFieldCount(expr, fields, path)
    throw unprocessable(`Invalid cron expression '${expr}': ${why} (${FIVE_FIELDS}).`, [{ path, message: why }])
  }
  // croner searches years ahead; null means the expression can never match (e.g. 30 February).
  if (job.nextRun(new Date(0)) === null) {
    throw unprocessable(`Cron expression '${expr}' never fires (no date matches it).`, [
      { path, message: 'never fires' },
    ])
  }
  return normalized
}

const FIVE_FIELDS = 'a cron expression here has exactly 5 fields: minute hour day-of-month month day-of-week'

function wrongFieldCount(expr: string, fields: number, path: string) {
  return unprocessable(`Invalid cron expression '${expr}': it has ${fields} field${fields === 1 ? '' : 's'}; ${FIVE_FIELDS}.`, [
    { path, message: `${fields} field${fields === 1 ? '' : 's'}, expected 5` },
  ])
}

/** Parses an ISO-8601 date-time with an explicit offset or Z; 422 otherwise. */
export function parseIsoInstant(value: string, path = AT_PATH): number {
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(value)
  const ms = ok ? Date.parse(value) : Number.NaN
  if (!Number.isFinite(ms)) {
    throw unprocessable(`'${value}' is not an ISO-8601 date-time with a timezone offset (e.g. 2026-11-22T09:00:00Z).`, [
      { path, message: 'invalid ISO-8601 date-time' },
    ])
  }
  return ms
}

/** The first fire time strictly after `afterMs`, or null (context triggers, past one-shots, exhausted crons). */
export function nextOccurrence(trigger: ReminderTrigger, afterMs: number, tz = 'UTC'): number | null {
  switch (trigger.type) {
    case 'scheduled': {
      const at = parseIsoInstant(trigger.at)
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
      const at = parseIsoInstant(trigger.at)
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
