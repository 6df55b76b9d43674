/**
 * Reminders of one agent: create / read / list / patch / delete, the lifecycle (complete,
 * dismiss, snooze, trigger now), due queries and occurrence previews. Every write is one
 * transaction; every query is scoped by agent_id (another agent's id is a 404).
 */
import type { SqlDatabase } from '../db/database.js'
import { isoAt, type Clock } from '../engine/clock.js'
import { badRequest, fieldPath, invalidField, notFound, tooMany, unprocessable } from '../errors.js'
import { newId } from '../ids.js'
import { occurrences, type ReminderTrigger } from './occurrences.js'
import {
  cleanBody,
  cleanTags,
  cleanTitle,
  MISSED_POLICIES,
  PRIORITIES,
  requestInstant,
  rowTrigger,
  toReminder,
  triggerColumns,
  type MissedPolicy,
  type Reminder,
  type ReminderPriority,
  type ReminderRow,
} from './model.js'
import type { Page } from '../pagination.js'
import { fireReminder } from './fire.js'
import { assertLive, clampSnoozeMinutes, computeNextFire } from './schedule.js'
import { ReminderRepository, type ListFilter } from './repository.js'
import type { SettingsService } from './settings.js'

export interface CreateReminderInput {
  title: string
  body?: string
  trigger: ReminderTrigger
  priority?: ReminderPriority
  context_tags?: string[]
  quiet_hours_exempt?: boolean
  session_id?: string | null
  missed_policy?: MissedPolicy
}
export type PatchReminderInput = Partial<CreateReminderInput>

const MAX_OCCURRENCES = 50
const SESSION_ID_ERROR = [{ path: fieldPath('body', 'session_id'), message: 'is not one of your sessions' }]

function oneOf<T extends string>(value: T | undefined, allowed: readonly T[], field: string): T | undefined {
  if (value !== undefined && !allowed.includes(value)) {
    throw unprocessable(`${field} must be one of ${allowed.join(', ')}.`, [{ path: fieldPath('body', field), message: 'not allowed' }])
  }
  return value
}

export class RemindersService {
  private readonly repo: ReminderRepository
  private readonly db: SqlDatabase
  private readonly settings: SettingsService
  private readonly clock: Clock

  constructor(repo: ReminderRepository, settings: SettingsService, clock: Clock) {
    this.repo = repo
    this.db = repo.db
    this.settings = settings
    this.clock = clock
  }

  /** `lock` for a read-then-write: no other transaction changes the row before this one ends (PostgreSQL). */
  private async load(agentId: string, id: string, lock = false): Promise<ReminderRow> {
    const row = await this.repo.get(agentId, id, lock)
    if (!row) throw notFound('reminder', id)
    return row
  }

  /** A reminder links only to one of its agent's sessions; another agent's is as unknown as a made-up id. */
  private async assertSession(agentId: string, sessionId: string | null | undefined): Promise<void> {
    if (typeof sessionId === 'string' && !(await this.repo.hasSession(agentId, sessionId))) {
      throw notFound('session', sessionId, SESSION_ID_ERROR)
    }
  }

  async create(agentId: string, input: CreateReminderInput): Promise<Reminder> {
    const now = this.clock()
    const trigger = triggerColumns(input.trigger)
    const row: ReminderRow = {
      id: newId('rem', now),
      agent_id: agentId,
      session_id: input.session_id ?? null,
      title: cleanTitle(input.title),
      body: cleanBody(input.body ?? ''),
      ...trigger,
      status: 'pending',
      priority: oneOf(input.priority, PRIORITIES, 'priority') ?? 'normal',
      context_tags: JSON.stringify(cleanTags(input.context_tags ?? [])),
      quiet_hours_exempt: input.quiet_hours_exempt ? 1 : 0,
      missed_policy: oneOf(input.missed_policy, MISSED_POLICIES, 'missed_policy') ?? 'once',
      created_at: now,
      updated_at: now,
      triggered_at: null,
      completed_at: null,
      snooze_until: null,
      last_fired_at: null,
      next_fire_at: null,
    }
    return this.db.transaction(async () => {
      await this.assertSession(agentId, input.session_id)
      const settings = await this.settings.get(agentId)
      // Concurrent creates of one agent take turns here, so two cannot both pass the count.
      await this.repo.lockAgent(agentId)
      if ((await this.repo.countLive(agentId)) >= settings.max_reminders) {
        throw tooMany(`This agent already has ${settings.max_reminders} live reminders (max_reminders); complete, dismiss or delete some first.`, 60)
      }
      row.next_fire_at = computeNextFire(row, now, settings.timezone)
      await this.repo.insert(row)
      return toReminder(await this.load(agentId, row.id))
    })
  }

  async get(agentId: string, id: string): Promise<Reminder> {
    return toReminder(await this.load(agentId, id))
  }

  async list(agentId: string, filter: ListFilter = {}): Promise<Page<Reminder>> {
    const page = await this.repo.list(agentId, filter)
    return { items: page.rows.map(toReminder), next_cursor: page.next_cursor }
  }

  /** Changes the fields given; a new trigger re-arms a pending or fired reminder and re-plans it. */
  async patch(agentId: string, id: string, input: PatchReminderInput): Promise<Reminder> {
    const now = this.clock()
    return this.db.transaction(async () => {
      const row = { ...(await this.load(agentId, id, true)) }
      if (input.title !== undefined) row.title = cleanTitle(input.title)
      if (input.body !== undefined) row.body = cleanBody(input.body)
      if (input.priority !== undefined) row.priority = oneOf(input.priority, PRIORITIES, 'priority') ?? row.priority
      if (input.context_tags !== undefined) row.context_tags = JSON.stringify(cleanTags(input.context_tags))
      if (input.quiet_hours_exempt !== undefined) row.quiet_hours_exempt = input.quiet_hours_exempt ? 1 : 0
      if (input.session_id !== undefined) {
        await this.assertSession(agentId, input.session_id)
        row.session_id = input.session_id
      }
      if (input.missed_policy !== undefined) {
        row.missed_policy = oneOf(input.missed_policy, MISSED_POLICIES, 'missed_policy') ?? row.missed_policy
      }
      if (input.trigger !== undefined) {
        Object.assign(row, triggerColumns(input.trigger))
        if (row.status === 'triggered') row.status = 'pending'
      }
      row.next_fire_at = computeNextFire(row, now, (await this.settings.get(agentId)).timezone)
      await this.repo.update(row, now)
      return toReminder(await this.load(agentId, id))
    })
  }

  async delete(agentId: string, id: string): Promise<void> {
    if (!(await this.repo.delete(agentId, id))) throw notFound('reminder', id)
  }

  complete(agentId: string, id: string): Promise<Reminder> {
    return this.transition(agentId, id, 'complete', (row, now) => {
      row.status = 'completed'
      row.completed_at = now
    })
  }

  dismiss(agentId: string, id: string): Promise<Reminder> {
    return this.transition(agentId, id, 'dismiss', (row) => {
      row.status = 'dismissed'
    })
  }

  /**
   * Snoozes for `minutes` or until `until` (exactly one), clamped to the priority's bounds.
   * `snooze_until` is that end; `next_fire_at` is when the reminder will fire, which for one never
   * delivered is never earlier than its own next fire time (`computeNextFire`).
   */
  async snooze(agentId: string, id: string, input: { minutes?: number; until?: string }): Promise<Reminder & { clamped?: true }> {
    const now = this.clock()
    const { minutes: asked, until } = input
    // Both given would leave one silently ignored: refuse rather than pick.
    if (asked !== undefined && until !== undefined) {
      throw badRequest('Give either minutes or until, not both.', [{ path: fieldPath('body', 'until'), message: 'not allowed with minutes' }])
    }
    const untilMs = until === undefined ? undefined : requestInstant(until, fieldPath('body', 'until'))
    // A snooze into the past is a mistake, not a request for the shortest snooze.
    if (untilMs !== undefined && untilMs <= now) throw invalidField(fieldPath('body', 'until'), 'must be in the future')
    let minutes: number
    if (asked !== undefined) {
      if (!Number.isFinite(asked)) throw unprocessable('minutes must be a number.', [{ path: fieldPath('body', 'minutes'), message: 'not a number' }])
      minutes = asked
    } else if (untilMs !== undefined) {
      minutes = (untilMs - now) / 60_000
    } else {
      throw badRequest('Give either minutes or until.', [{ path: fieldPath('body', 'minutes'), message: 'required' }])
    }
    let clamped = false
    const out = await this.transition(agentId, id, 'snooze', (row) => {
      const c = clampSnoozeMinutes(minutes, row.priority)
      clamped = c.clamped
      row.snooze_until = c.clamped || untilMs === undefined ? Math.round(now + c.minutes * 60_000) : untilMs
      row.status = 'snoozed'
    })
    return clamped ? { ...out, clamped: true } : out
  }

  /**
   * Fires the reminder now, as the scheduler would: the same state change (`fireReminder`) and,
   * in the same transaction, a `reminder.triggered` message with `scheduled_for` = now. The fire
   * is recorded under that instant, so it never blocks a scheduled occurrence at another instant;
   * a recurring reminder that was due has that occurrence answered by this fire (it advances).
   */
  trigger(agentId: string, id: string): Promise<Reminder> {
    return this.transition(agentId, id, 'trigger', () => undefined, true)
  }

  /**
   * Marks already-loaded rows fired at `nowMs` for turn start (the caller holds the transaction).
   * No webhook message: the agent pulled these itself and has them in the response.
   */
  async markFired(rows: readonly ReminderRow[], nowMs: number, agentTz: string): Promise<Reminder[]> {
    const out: Reminder[] = []
    for (const r of rows) out.push((await fireReminder(this.repo, r, nowMs, agentTz, [])).reminder)
    return out
  }

  private transition(agentId: string, id: string, action: string, apply: (row: ReminderRow, now: number) => void, fire = false): Promise<Reminder> {
    const now = this.clock()
    return this.db.transaction(async () => {
      const row = { ...(await this.load(agentId, id, true)) }
      assertLive(row, action)
      const tz = (await this.settings.get(agentId)).timezone
      if (fire) return (await fireReminder(this.repo, row, now, tz, [{ scheduled_for: now, late: false }])).reminder
      apply(row, now)
      row.next_fire_at = computeNextFire(row, now, tz)
      return toReminder(await this.repo.update(row, now))
    })
  }

  /**
   * Live reminders due at `asOfMs` (next fire time reached), one page in id order like `list`:
   * ids never change, so a reminder that fires or is re-planned between pages is neither seen
   * twice nor skipped, which a fire-time order could not promise.
   */
  due(agentId: string, asOfMs: number = this.clock(), page: { limit?: number; cursor?: string } = {}): Promise<Page<Reminder>> {
    return this.list(agentId, { ...page, due_at: asOfMs })
  }

  /** The next `count` fire times at or after `from` (default now), ISO UTC. */
  async occurrences(agentId: string, id: string, count = 5, from?: string): Promise<string[]> {
    if (!Number.isInteger(count) || count < 1 || count > MAX_OCCURRENCES) {
      throw unprocessable(`count must be an integer from 1 to ${MAX_OCCURRENCES}.`, [{ path: fieldPath('querystring', 'count'), message: 'out of range' }])
    }
    const row = await this.load(agentId, id)
    const fromMs = from === undefined ? this.clock() : requestInstant(from, fieldPath('querystring', 'from'))
    return occurrences(rowTrigger(row), fromMs, count, (await this.settings.get(agentId)).timezone).map(isoAt)
  }
}
