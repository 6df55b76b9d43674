/**
 * Reminder data as stored (snake_case row, epoch ms) and as served (`Reminder` in openapi.yaml, ISO
 * times), plus the input checks shared by create and patch.
 */
import { isoAt, parseInstant } from '../engine/clock.js'
import { fieldPath, invalidField, unprocessable } from '../errors.js'
import { InvalidTrigger, triggerInstant, validateCron, validateTimezone, type ReminderTrigger } from './occurrences.js'

export const PRIORITIES = ['urgent', 'normal', 'low'] as const
export const MISSED_POLICIES = ['once', 'skip', 'all'] as const
export type ReminderStatus = 'pending' | 'triggered' | 'completed' | 'dismissed' | 'snoozed'
export type ReminderPriority = (typeof PRIORITIES)[number]
export type TriggerType = 'scheduled' | 'recurring' | 'context'
export type MissedPolicy = (typeof MISSED_POLICIES)[number]

export const LIMITS = { title: 200, body: 4000, pattern: 200, tags: 20, tag: 50 } as const

/**
 * A `reminders` row as the repository returns it (either dialect: `quiet_hours_exempt` is read
 * back as 0/1 on PostgreSQL too). SQLite's `doc_id` and the ticker's `claimed_until` stay in the
 * repository.
 */
export interface ReminderRow {
  id: string
  agent_id: string
  session_id: string | null
  title: string
  body: string
  trigger_type: TriggerType
  trigger_at: number | null
  trigger_cron: string | null
  trigger_timezone: string | null
  trigger_pattern: string | null
  status: ReminderStatus
  priority: ReminderPriority
  context_tags: string
  quiet_hours_exempt: number
  missed_policy: MissedPolicy
  created_at: number
  updated_at: number
  triggered_at: number | null
  completed_at: number | null
  snooze_until: number | null
  last_fired_at: number | null
  next_fire_at: number | null
}

/** Every column of ReminderRow, in table order. */
export const ROW_COLUMNS = [
  'id',
  'agent_id',
  'session_id',
  'title',
  'body',
  'trigger_type',
  'trigger_at',
  'trigger_cron',
  'trigger_timezone',
  'trigger_pattern',
  'status',
  'priority',
  'context_tags',
  'quiet_hours_exempt',
  'missed_policy',
  'created_at',
  'updated_at',
  'triggered_at',
  'completed_at',
  'snooze_until',
  'last_fired_at',
  'next_fire_at',
] as const satisfies readonly (keyof ReminderRow)[]

export type TriggerJSON = { type: 'scheduled'; at: string } | { type: 'recurring'; cron: string; timezone: string | null } | { type: 'context'; pattern: string }

/** A reminder as served (`Reminder` in openapi.yaml). */
export interface Reminder {
  id: string
  title: string
  body: string
  trigger: TriggerJSON
  status: ReminderStatus
  priority: ReminderPriority
  context_tags: string[]
  quiet_hours_exempt: boolean
  session_id: string | null
  missed_policy: MissedPolicy
  created_at: string
  updated_at: string
  triggered_at: string | null
  completed_at: string | null
  snooze_until: string | null
  next_fire_at: string | null
  last_fired_at: string | null
}

const iso = (ms: number | null): string | null => (ms === null ? null : isoAt(ms))

export function toReminder(row: ReminderRow): Reminder {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    trigger: rowTrigger(row),
    status: row.status,
    priority: row.priority,
    context_tags: JSON.parse(row.context_tags) as string[],
    quiet_hours_exempt: row.quiet_hours_exempt === 1,
    session_id: row.session_id,
    missed_policy: row.missed_policy,
    created_at: isoAt(row.created_at),
    updated_at: isoAt(row.updated_at),
    triggered_at: iso(row.triggered_at),
    completed_at: iso(row.completed_at),
    snooze_until: iso(row.snooze_until),
    next_fire_at: iso(row.next_fire_at),
    last_fired_at: iso(row.last_fired_at),
  }
}

// C0/C1 controls except tab and newline, plus line/paragraph separators and bidi overrides,
// which could make stored text display or inject differently from how it reads.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g

function cleanText(value: string): string {
  return value.replace(/\r\n?/g, '\n').replace(CONTROL, '')
}

/** `field` is the body field's segments, e.g. ['trigger', 'pattern']. */
function boundedText(value: string, max: number, field: (string | number)[], required: boolean): string {
  const clean = cleanText(value).trim()
  const name = field.join('.')
  const path = fieldPath('body', ...field)
  if (required && clean.length === 0) throw unprocessable(`${name} must not be empty.`, [{ path, message: 'empty' }])
  if (clean.length > max) {
    throw unprocessable(`${name} is longer than ${max} characters.`, [{ path, message: `longer than ${max}` }])
  }
  return clean
}

export const cleanTitle = (v: string) => boundedText(v, LIMITS.title, ['title'], true)
export const cleanBody = (v: string) => boundedText(v, LIMITS.body, ['body'], false)

export function cleanTags(tags: readonly string[]): string[] {
  if (tags.length > LIMITS.tags) {
    throw unprocessable(`At most ${LIMITS.tags} context tags.`, [{ path: fieldPath('body', 'context_tags'), message: 'too many' }])
  }
  const out: string[] = []
  tags.forEach((t, i) => {
    const c = boundedText(t, LIMITS.tag, ['context_tags', i], true)
    if (!out.includes(c)) out.push(c)
  })
  return out
}

/** Trigger columns of a validated trigger. */
export interface TriggerColumns {
  trigger_type: TriggerType
  trigger_at: number | null
  trigger_cron: string | null
  trigger_timezone: string | null
  trigger_pattern: string | null
}

/** Word tokens as FTS5's unicode61 tokenizer sees them (letters, digits, underscore). */
export function wordTokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []
}

/**
 * Runs occurrence maths on values from a request and turns its InvalidTrigger into the problem
 * for the field the value came from (`pathOf`): a malformed value (an `at` that is no date-time,
 * a cron with three fields) is a 400, as schema validation words it; a well-formed one that
 * cannot be used (a cron that never fires, an unknown timezone) is a 422.
 */
export function fromRequest<T>(run: () => T, pathOf: (field: InvalidTrigger['field']) => string): T {
  try {
    return run()
  } catch (err) {
    if (!(err instanceof InvalidTrigger)) throw err
    const path = pathOf(err.field)
    throw err.malformed ? invalidField(path, err.reason, err.message) : unprocessable(err.message, [{ path, message: err.reason }])
  }
}

/** An instant from a request field other than a trigger (`until`, `as_of`, `from`, `now`); 400 at `path` if it is none. */
export function requestInstant(value: string, path: string): number {
  const ms = parseInstant(value)
  if (ms === undefined) throw invalidField(path, 'must match format "date-time"')
  return ms
}

/** Validates a trigger from the API: 400 for a malformed date or cron, 422 for a cron that never fires, an unknown timezone or an empty pattern. */
export function triggerColumns(trigger: ReminderTrigger): TriggerColumns {
  return fromRequest(
    () => columnsOf(trigger),
    (field) => fieldPath('body', 'trigger', field),
  )
}

function columnsOf(trigger: ReminderTrigger): TriggerColumns {
  const none = { trigger_at: null, trigger_cron: null, trigger_timezone: null, trigger_pattern: null }
  switch (trigger.type) {
    case 'scheduled':
      return { ...none, trigger_type: 'scheduled', trigger_at: triggerInstant(trigger.at) }
    case 'recurring': {
      const tz = trigger.timezone ? validateTimezone(trigger.timezone) : null
      return { ...none, trigger_type: 'recurring', trigger_cron: validateCron(trigger.cron, tz ?? 'UTC'), trigger_timezone: tz }
    }
    case 'context': {
      const pattern = boundedText(trigger.pattern, LIMITS.pattern, ['trigger', 'pattern'], true)
      if (wordTokens(pattern).length === 0) {
        throw unprocessable('trigger.pattern needs at least one word to match on.', [{ path: fieldPath('body', 'trigger', 'pattern'), message: 'no words' }])
      }
      return { ...none, trigger_type: 'context', trigger_pattern: pattern }
    }
    default:
      throw unprocessable('trigger.type must be scheduled, recurring or context.', [{ path: fieldPath('body', 'trigger', 'type'), message: 'unknown' }])
  }
}

/** A row's trigger as the API shows it (also the occurrence module's `ReminderTrigger`). */
export function rowTrigger(row: Pick<ReminderRow, keyof TriggerColumns>): TriggerJSON {
  switch (row.trigger_type) {
    case 'scheduled':
      return { type: 'scheduled', at: isoAt(row.trigger_at ?? 0) }
    case 'recurring':
      return { type: 'recurring', cron: row.trigger_cron ?? '', timezone: row.trigger_timezone }
    case 'context':
      return { type: 'context', pattern: row.trigger_pattern ?? '' }
  }
}
