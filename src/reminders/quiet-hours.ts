/**
 * Quiet hours in the agent's own timezone (pure). Start inclusive, end exclusive, ranges may
 * cross midnight ("22:00"–"07:00"), and start == end is never quiet (an empty range, not 24 h).
 * Every reading goes through the agent's IANA timezone, never the server's local hours.
 */
import { Cron } from 'croner'

export interface QuietHoursSettings {
  timezone: string
  quiet_hours: { start: string; end: string } | null
}

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/

export function isHhMm(value: string): boolean {
  return HHMM.test(value)
}

function minutesOf(hhmm: string): number {
  const m = HHMM.exec(hhmm)
  if (!m) throw new RangeError(`not an HH:MM time: ${hhmm}`)
  return Number(m[1]) * 60 + Number(m[2])
}

const formatters = new Map<string, Intl.DateTimeFormat>()

/** Minutes since local midnight of `atMs` in `tz`. */
function localMinuteOfDay(atMs: number, tz: string): number {
  let fmt = formatters.get(tz)
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', { timeZone: tz, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    formatters.set(tz, fmt)
  }
  let hour = 0
  let minute = 0
  for (const p of fmt.formatToParts(new Date(atMs))) {
    if (p.type === 'hour') hour = Number(p.value)
    else if (p.type === 'minute') minute = Number(p.value)
  }
  return hour * 60 + minute
}

export function isQuietHours(settings: QuietHoursSettings, atMs: number): boolean {
  const q = settings.quiet_hours
  if (!q) return false
  const start = minutesOf(q.start)
  const end = minutesOf(q.end)
  if (start === end) return false
  const cur = localMinuteOfDay(atMs, settings.timezone)
  return start < end ? cur >= start && cur < end : cur >= start || cur < end
}

/**
 * The instant quiet hours next end after `atMs` (when held fires may go out); `atMs` itself
 * when it is not quiet. An end time inside a DST gap resolves to the first valid instant after it.
 */
export function quietHoursEnd(settings: QuietHoursSettings, atMs: number): number {
  if (!isQuietHours(settings, atMs) || !settings.quiet_hours) return atMs
  const end = minutesOf(settings.quiet_hours.end)
  const job = new Cron(`${end % 60} ${Math.floor(end / 60)} * * *`, { timezone: settings.timezone, paused: true })
  const next = job.nextRun(new Date(atMs))
  // A daily expression always has a next run; the fallback only satisfies the type.
  return next ? next.getTime() : atMs
}
