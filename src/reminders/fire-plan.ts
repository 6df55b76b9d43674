/**
 * What the ticker does with one due reminder (pure; the ticker applies it in a transaction).
 *
 * - Quiet hours (agent timezone) hold a non-urgent, non-exempt fire: `next_fire_at` moves to the
 *   end of the quiet hours and the owed occurrence keeps its `scheduled_for` in a hold. A held
 *   fire is delivered once when the hours end (late: true), whatever `missed_policy` says.
 * - Otherwise the due occurrences are those from `next_fire_at` up to now (recurring reminders can
 *   owe several after downtime). `missed_policy` picks the fires: `all` every one (the latest
 *   MAX_CATCH_UP), `once` only the latest, `skip` the latest only if it is not late.
 * - A fire is late when it goes out more than LATE_AFTER_MS after its scheduled time.
 * - A plan with fires is applied by `fireReminder`, the state change every firing path shares
 *   (recurring stays `pending` with its next occurrence, a one-shot becomes `triggered`). A plan
 *   that fires nothing (a stale occurrence under `skip`) only moves the schedule on.
 */
import type { ReminderRow } from './model.js'
import { rowTrigger } from './model.js'
import { nextOccurrence } from './occurrences.js'
import { isQuietHours, quietHoursEnd, type QuietHoursSettings } from './quiet-hours.js'

/** The ticker runs every second; a fire within a minute of its time is on time. */
const LATE_AFTER_MS = 60_000
/** At most this many catch-up fires per reminder for `missed_policy: all`. */
const MAX_CATCH_UP = 100

interface PlannedFire {
  scheduled_for: number
  late: boolean
}

export type FirePlan =
  | { kind: 'hold'; scheduled_for: number; next_fire_at: number }
  /** `fires` is never empty. */
  | { kind: 'fire'; fires: PlannedFire[] }
  /** Nothing to announce; the columns to write back. */
  | { kind: 'skip'; status: ReminderRow['status']; next_fire_at: number | null }

type PlanRow = Pick<
  ReminderRow,
  'status' | 'priority' | 'quiet_hours_exempt' | 'missed_policy' | 'next_fire_at' | 'trigger_type' | 'trigger_at' | 'trigger_cron' | 'trigger_timezone' | 'trigger_pattern'
>

/** Due occurrences of a recurring reminder from `first` up to `nowMs`, the latest MAX_CATCH_UP. */
function dueOccurrences(row: PlanRow, first: number, nowMs: number, agentTz: string): number[] {
  const out = [first]
  let t = first
  // Walk forward; past MAX_CATCH_UP keep only the most recent window.
  for (let guard = 0; guard < 100_000; guard++) {
    const next = nextOccurrence(rowTrigger(row), t, agentTz)
    if (next === null || next > nowMs) break
    out.push(next)
    if (out.length > MAX_CATCH_UP) out.shift()
    t = next
  }
  return out
}

export function planFire(row: PlanRow, nowMs: number, settings: QuietHoursSettings, hold: { scheduled_for: number } | null): FirePlan {
  const due = row.next_fire_at ?? nowMs
  const holdable = row.priority !== 'urgent' && !row.quiet_hours_exempt
  if (holdable && isQuietHours(settings, nowMs)) {
    return { kind: 'hold', scheduled_for: hold?.scheduled_for ?? due, next_fire_at: quietHoursEnd(settings, nowMs) }
  }
  const recurring = row.trigger_type === 'recurring'
  let fires: PlannedFire[]
  let lastOccurrence = due
  if (hold) {
    fires = [{ scheduled_for: hold.scheduled_for, late: true }]
  } else {
    const occ = recurring && row.status !== 'snoozed' ? dueOccurrences(row, due, nowMs, settings.timezone) : [due]
    lastOccurrence = occ[occ.length - 1]!
    const all = occ.map((t) => ({ scheduled_for: t, late: nowMs - t > LATE_AFTER_MS }))
    const latest = all[all.length - 1]!
    if (row.missed_policy === 'all') fires = all
    else if (row.missed_policy === 'skip') fires = latest.late ? [] : [latest]
    else fires = [latest]
  }
  if (fires.length > 0) return { kind: 'fire', fires }
  if (recurring) {
    return { kind: 'skip', status: 'pending', next_fire_at: nextOccurrence(rowTrigger(row), Math.max(nowMs, lastOccurrence), settings.timezone) }
  }
  // A one-shot skipped as stale stays as it was, with nothing left to fire.
  return { kind: 'skip', status: row.status === 'snoozed' ? 'pending' : row.status, next_fire_at: null }
}
