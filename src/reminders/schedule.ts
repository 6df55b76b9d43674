/**
 * When a reminder fires next, how firing and snoozing change it, and the snooze clamps (pure).
 */
import { conflict } from '../errors.js'
import { nextOccurrence } from './occurrences.js'
import { rowTrigger, type ReminderPriority, type ReminderRow, type ReminderStatus } from './model.js'

type ScheduleFields = Pick<ReminderRow, 'trigger_type' | 'trigger_at' | 'trigger_cron' | 'trigger_timezone' | 'trigger_pattern' | 'status' | 'snooze_until' | 'last_fired_at'>

/**
 * `next_fire_at` for a row: terminal or context → null (context reminders fire on a matching
 * turn, not on a clock); a pending one-shot → its `at`, even when past (so it is due at once); a
 * live recurring one → its next occurrence after `nowMs` in its own timezone, else the agent's. A
 * fired one-shot (triggered) has nothing left to fire. Snoozed → `snooze_until` once the reminder
 * was delivered ("remind me again then"); never delivered, a snooze postpones but never brings
 * forward: the later of `snooze_until` and the reminder's own next fire time.
 */
export function computeNextFire(row: ScheduleFields, nowMs: number, agentTz: string): number | null {
  if (row.status === 'completed' || row.status === 'dismissed') return null
  if (row.trigger_type === 'context') return null
  if (row.status === 'snoozed') {
    const own = row.last_fired_at === null ? computeNextFire({ ...row, status: 'pending' }, nowMs, agentTz) : null
    return row.snooze_until === null || own === null ? row.snooze_until : Math.max(row.snooze_until, own)
  }
  if (row.trigger_type === 'scheduled') return row.status === 'pending' ? row.trigger_at : null
  return nextOccurrence(rowTrigger(row), nowMs, agentTz)
}

/** Snooze bounds in minutes per priority (Gimli's defaultPriorityConfig). */
const SNOOZE_BOUNDS: Readonly<Record<ReminderPriority, { min: number; max: number }>> = {
  urgent: { min: 5, max: 60 },
  normal: { min: 15, max: 24 * 60 },
  low: { min: 60, max: 7 * 24 * 60 },
}

export function clampSnoozeMinutes(minutes: number, priority: ReminderPriority): { minutes: number; clamped: boolean } {
  const { min, max } = SNOOZE_BOUNDS[priority]
  const m = Math.min(max, Math.max(min, minutes))
  return { minutes: m, clamped: m !== minutes }
}

const LIVE: ReadonlySet<ReminderStatus> = new Set(['pending', 'triggered', 'snoozed'])

/** 409 unless the reminder is still live (completed and dismissed are final). */
export function assertLive(row: Pick<ReminderRow, 'id' | 'status'>, action: string): void {
  if (!LIVE.has(row.status)) {
    throw conflict(`Cannot ${action} reminder ${row.id}: it is already ${row.status}.`)
  }
}

/**
 * The columns that change when a reminder fires at `nowMs`, on every path (ticker, trigger now,
 * turn start). A recurring reminder stays `pending` with its next occurrence after now: when the
 * fired occurrence was the due one that advances the schedule, and when it was not yet due the
 * next occurrence after now is still the one already planned, so nothing moves. A one-shot
 * becomes `triggered` with nothing left to fire. Either way the snooze is used up.
 */
export function firedColumns(row: ScheduleFields, nowMs: number, agentTz: string) {
  const status: ReminderStatus = row.trigger_type === 'recurring' ? 'pending' : 'triggered'
  return {
    status,
    triggered_at: nowMs,
    last_fired_at: nowMs,
    snooze_until: null,
    next_fire_at: computeNextFire({ ...row, status, snooze_until: null }, nowMs, agentTz),
  }
}
