import { Type } from 'typebox'
import { LIMITS } from './model.js'
import { Body, Defaulted, Id, ListOf, PaginationQuery, Timestamp } from '../schemas.js'
import { WarnAt } from '../sessions/detection-schemas.js'
import { HookSettings, HookSettingsUpdate } from '../hooks/settings.js'
import { SessionConfigInput } from '../sessions/schemas.js'

/**
 * Reminder, settings and turn-start schemas. A value that is no date-time is refused here (400,
 * `format: 'date-time'`, the rule of clock.ts `parseInstant`); crons, timezones and patterns are
 * checked by the services (422 with a message saying what is wrong), so for them the schemas only
 * bound sizes.
 */
const Priority = Type.Union([Type.Literal('urgent'), Type.Literal('normal'), Type.Literal('low')])
const Status = Type.Union([Type.Literal('pending'), Type.Literal('triggered'), Type.Literal('completed'), Type.Literal('dismissed'), Type.Literal('snoozed')])
const TriggerType = Type.Union([Type.Literal('scheduled'), Type.Literal('recurring'), Type.Literal('context')])
const MissedPolicy = Type.Union([Type.Literal('once'), Type.Literal('skip'), Type.Literal('all')])
/** An instant a client sends: ISO-8601 with Z or an offset; anything else is a 400 naming the field. */
const Instant = Type.String({
  format: 'date-time',
  maxLength: 64,
  description: 'ISO-8601 date-time with Z or an offset.',
})
export const ReminderParams = Type.Object({ id: Id('rem') })
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

const TriggerInput = Type.Union([
  Body({ type: Type.Literal('scheduled'), at: Instant }),
  Body({
    type: Type.Literal('recurring'),
    cron: Type.String({ minLength: 1, maxLength: 120, description: '5 fields: minute hour day month weekday.', examples: ['0 9 * * MON-FRI'] }),
    timezone: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, description: "IANA name; default: the agent's settings timezone." }))),
  }),
  Body({ type: Type.Literal('context'), pattern: Type.String({ minLength: 1, maxLength: LIMITS.pattern }) }),
])

const Trigger = Type.Union([
  Type.Object({ type: Type.Literal('scheduled'), at: Timestamp }),
  Type.Object({ type: Type.Literal('recurring'), cron: Type.String(), timezone: Nullable(Type.String()) }),
  Type.Object({ type: Type.Literal('context'), pattern: Type.String() }),
])

const reminderFields = {
  id: Id('rem'),
  title: Type.String(),
  body: Type.String(),
  trigger: Trigger,
  status: Status,
  priority: Priority,
  context_tags: Type.Array(Type.String()),
  quiet_hours_exempt: Type.Boolean(),
  session_id: Nullable(Type.String()),
  missed_policy: MissedPolicy,
  created_at: Timestamp,
  updated_at: Timestamp,
  triggered_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  snooze_until: Type.Union([Timestamp, Type.Null()], {
    description: 'Set by a snooze: the end asked for (`minutes` from now or `until`), after clamping to the priority bounds; null once the reminder fires.',
  }),
  next_fire_at: Type.Union([Timestamp, Type.Null()], {
    description:
      'When the scheduler fires the reminder next; null when nothing is scheduled (context reminders, fired one-shots, completed or dismissed). A snoozed reminder never delivered fires at the later of snooze_until and its own next occurrence, never earlier.',
  }),
  last_fired_at: Nullable(Timestamp),
}
export const Reminder = Type.Object(reminderFields, { title: 'Reminder' })
export const SnoozedReminder = Type.Object(
  { ...reminderFields, clamped: Type.Optional(Type.Literal(true, { description: 'Present when the duration was clamped to the priority bounds.' })) },
  { title: 'SnoozedReminder' },
)
export const ReminderList = ListOf(Reminder, { title: 'ReminderList' })

const mutable = {
  title: Type.String({ minLength: 1, maxLength: LIMITS.title }),
  body: Type.String({ maxLength: LIMITS.body }),
  trigger: TriggerInput,
  priority: Priority,
  context_tags: Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.tag }), { maxItems: LIMITS.tags }),
  quiet_hours_exempt: Type.Boolean(),
  session_id: Nullable(Type.String({ minLength: 1, maxLength: 64 })),
  missed_policy: MissedPolicy,
}
/** Fields both create and patch take as optional; create also requires title and trigger. */
const optionalMutable = {
  body: Type.Optional(mutable.body),
  priority: Type.Optional(mutable.priority),
  context_tags: Type.Optional(mutable.context_tags),
  quiet_hours_exempt: Type.Optional(mutable.quiet_hours_exempt),
  session_id: Type.Optional(mutable.session_id),
  missed_policy: Type.Optional(mutable.missed_policy),
}
/**
 * The create example recurs every 10 minutes, so run as is it is due within minutes whenever it is
 * tried; a fixed `at` in an example goes stale (a past instant fires at once and the `due` list that
 * follows is empty), and an instant computed when the document is built would make the committed
 * openapi.yaml differ on every build.
 */
export const CreateReminder = Body(
  { title: mutable.title, trigger: mutable.trigger, ...optionalMutable },
  {
    examples: [
      {
        title: 'Check the load-test CI run',
        body: 'Read the result of the rate-limit load test before changing the limiter again.',
        trigger: { type: 'recurring', cron: '*/10 * * * *' },
        context_tags: ['ci', 'load-test'],
      },
    ],
  },
)
export const PatchReminder = Body(
  { title: Type.Optional(mutable.title), trigger: Type.Optional(mutable.trigger), ...optionalMutable },
  { examples: [{ priority: 'urgent', context_tags: ['ci', 'load-test', 'release'] }] },
)

export const ListRemindersQuery = Type.Object({
  status: Type.Optional(Status),
  priority: Type.Optional(Priority),
  trigger_type: Type.Optional(TriggerType),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.tag })),
  ...PaginationQuery('rem').properties,
})
export const DueQuery = Type.Object({
  as_of: Type.Optional(Instant),
  ...PaginationQuery('rem').properties,
})
export const SearchQuery = Type.Object({
  q: Type.String({ maxLength: 1000, examples: ['load test'] }),
  limit: Defaulted(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
})
export const OccurrencesQuery = Type.Object({
  count: Defaulted(Type.Integer({ minimum: 1, maximum: 50, default: 5 })),
  from: Type.Optional(Instant),
})

export const SnoozeBody = Body(
  {
    minutes: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'More than 0; clamped per priority: urgent 5–60, normal 15–1440, low 60–10080.' })),
    until: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'ISO-8601 date-time with Z or an offset, after now; clamped like `minutes`.' })),
  },
  { examples: [{ minutes: 30 }] },
)

export const SearchResults = Type.Object(
  { items: Type.Array(Type.Object({ reminder: Reminder, score: Type.Number({ description: 'BM25 mapped to (0, 1); higher is better.' }) })) },
  { title: 'ReminderSearchResults' },
)

const DailyBudgetSchema = Type.Object(
  {
    tokens: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Tokens all sessions of the agent may report in a day.' })),
    cost_usd: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Dollars all sessions of the agent may report in a day.' })),
    warn_at: Type.Optional(WarnAt),
  },
  {
    additionalProperties: false,
    title: 'DailyBudget',
    description:
      "The agent's budget per day (in its timezone) across all its sessions, sub-agents' included: each warning threshold crossed emits `agent.budget_warning`, " +
      'the step that spends it `agent.budget_exceeded`, and every step that spends after that answers `abort` (null: none).',
  },
)

export const Settings = Type.Object(
  {
    timezone: Type.String(),
    quiet_hours: Nullable(Type.Object({ start: Type.String(), end: Type.String() })),
    max_reminders: Type.Integer(),
    injection_budget_tokens: Type.Integer(),
    session_defaults: SessionConfigInput,
    hooks: HookSettings,
    daily_budget: Nullable(DailyBudgetSchema),
  },
  { title: 'Settings' },
)
const HhMm = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', examples: ['22:00'] })
export const SettingsUpdate = Body(
  {
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    quiet_hours: Type.Optional(Nullable(Body({ start: HhMm, end: HhMm }))),
    max_reminders: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    injection_budget_tokens: Type.Optional(Type.Integer({ minimum: 0, maximum: 200_000 })),
    // Replaces the config of the sessions goalkeeper opens itself (coding-agent hooks).
    session_defaults: Type.Optional(SessionConfigInput),
    hooks: Type.Optional(HookSettingsUpdate),
    daily_budget: Type.Optional(Nullable(DailyBudgetSchema)),
  },
  { examples: [{ timezone: 'Europe/Berlin', quiet_hours: { start: '22:00', end: '07:00' } }] },
)

const Message = Type.Object({ role: Type.String(), content: Type.Unknown() }, { additionalProperties: true })
// No session_id in the example: it would name a session the reader does not have (a 404).
export const TurnBody = Body(
  {
    user_message: Type.String({ maxLength: 100_000 }),
    session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    iteration: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    messages: Type.Optional(Type.Array(Message, { maxItems: 1000 })),
    now: Type.Optional(Instant),
  },
  { examples: [{ user_message: 'Continue with the rate limiter.' }] },
)
export const TurnResult = Type.Object(
  {
    reminders: Type.Array(Reminder),
    injection: Type.Object({ text: Type.String(), token_estimate: Type.Integer() }),
    parts: Type.Array(
      Type.Object({
        kind: Type.String({ description: 'reminder, goal_reminder or recitation.' }),
        priority: Type.Integer({ description: 'Lower goes into the budget first: urgent reminder 0, goal reminder 1, normal 2, recitation 3, low 4.' }),
        token_estimate: Type.Integer(),
        included: Type.Boolean(),
        truncated: Type.Boolean(),
        reminder_id: Type.Optional(Id('rem')),
        reason: Type.Optional(
          Type.Union([Type.Literal('budget'), Type.Literal('quiet_hours'), Type.Literal('unchanged')], {
            description: 'Why the part was left out: the token budget, quiet hours, or (skip_unchanged) identical to the last one injected.',
          }),
        ),
        last_injected_at: Type.Optional(Type.Integer({ description: 'For `unchanged`: the turn the identical block was last injected at.' })),
        resend_at: Type.Optional(Type.Integer({ description: 'For `unchanged`: the turn from which it goes out again even if unchanged.' })),
      }),
    ),
    messages: Type.Optional(Type.Array(Message)),
  },
  { title: 'TurnStart' },
)
