/**
 * The one way a reminder fires, whoever fires it (the ticker, `POST /v1/reminders/{id}/trigger`,
 * `POST /v1/turns`), and what the ticker does with one due reminder. The caller holds the
 * transaction, so the new state, the outbox messages and the fire records commit together.
 */
import { isoAt } from '../engine/clock.js'
import { planFire } from './fire-plan.js'
import { toReminder, type Reminder, type ReminderRow } from './model.js'
import type { QuietHoursSettings } from './quiet-hours.js'
import type { ReminderRepository } from './repository.js'
import { firedColumns } from './schedule.js'

/** One occurrence a fire announces as `reminder.triggered`. */
export interface AnnouncedFire {
  scheduled_for: number
  late: boolean
}

/**
 * Fires `row` at `nowMs`: writes `firedColumns` (recurring stays pending with its next occurrence
 * after now, a one-shot becomes triggered), then announces each of `announce` as one
 * `reminder.triggered` outbox message plus a `reminder_fires` record keyed by
 * (reminder, scheduled_for). An instant already recorded is skipped, message included, so no
 * occurrence is announced twice. Callers read `row` locked (PostgreSQL: FOR UPDATE), so no other
 * transaction fires it between that read and this write. Returns the reminder as it is after the fire.
 */
export async function fireReminder(repo: ReminderRepository, row: ReminderRow, nowMs: number, agentTz: string, announce: readonly AnnouncedFire[]): Promise<{ reminder: Reminder; announced: number }> {
  const reminder = toReminder(await repo.markFired(row, firedColumns(row, nowMs, agentTz), nowMs))
  let announced = 0
  for (const f of announce) {
    if (await repo.hasFired(row.id, f.scheduled_for)) continue
    const data = { reminder, scheduled_for: isoAt(f.scheduled_for), late: f.late }
    const msg = await repo.outbox.enqueue(row.agent_id, 'reminder.triggered', data, nowMs)
    await repo.recordFire(row, f.scheduled_for, msg.message_id, nowMs, f.late)
    announced++
  }
  return { reminder, announced }
}

export type DueOutcome = { kind: 'held' | 'skipped' } | { kind: 'fired'; announced: number }

/**
 * The scheduler's step for one due reminder (`planFire` decides, this applies): hold it through
 * quiet hours, move its schedule on without a fire, or fire it. A hold taken before the
 * reminder's last change (a patch, a re-plan for a new agent timezone) belongs to a plan that no
 * longer applies and is ignored, then replaced or dropped.
 */
export async function fireDue(repo: ReminderRepository, row: ReminderRow, nowMs: number, settings: QuietHoursSettings): Promise<DueOutcome> {
  const h = await repo.hold(row.id)
  const hold = h && h.held_at >= row.updated_at ? h : null
  const plan = planFire(row, nowMs, settings, hold)
  if (plan.kind === 'hold') {
    await repo.putHold(row.id, plan.scheduled_for, nowMs)
    await repo.setNextFire(row, plan.next_fire_at, nowMs)
    return { kind: 'held' }
  }
  if (h) await repo.dropHold(row.id)
  if (plan.kind === 'skip') {
    await repo.skip(row, plan.status, plan.next_fire_at, nowMs)
    return { kind: 'skipped' }
  }
  // The same state change and announcement as a manual trigger.
  return { kind: 'fired', announced: (await fireReminder(repo, row, nowMs, settings.timezone, plan.fires)).announced }
}
