import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { fieldPath } from '../errors.js'
import { requestInstant } from './model.js'
import type { ReminderSearch } from './search.js'
import type { RemindersService } from './service.js'
import type { SettingsService } from './settings.js'
import type { TurnsService } from './turns.js'
import { problemResponses } from '../schemas.js'
import {
  CreateReminder,
  DueQuery,
  ListRemindersQuery,
  OccurrencesQuery,
  PatchReminder,
  Reminder,
  ReminderList,
  ReminderParams,
  SearchQuery,
  SearchResults,
  Settings,
  SettingsUpdate,
  SnoozeBody,
  SnoozedReminder,
  TurnBody,
  TurnResult,
} from './schemas.js'

export interface ReminderRouteOptions {
  reminders: RemindersService
  reminderSearch: ReminderSearch
  settings: SettingsService
  turns: TurnsService
}

const tags = ['reminders']

/** Reminders, settings and turn start: thin pass-through to the services. */
export const reminderRoutes: FastifyPluginAsyncTypebox<ReminderRouteOptions> = async (app, opts) => {
  const { reminders, reminderSearch, settings, turns } = opts

  app.post(
    '/reminders',
    {
      config: { auth: 'agent', idempotent: true },
      schema: {
        operationId: 'createReminder',
        tags,
        summary: 'Create a reminder (scheduled, recurring or context-triggered).',
        body: CreateReminder,
        response: { 201: Reminder, ...problemResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await request.uow.run(() => reminders.create(request.agentId, request.body))),
  )

  app.get(
    '/reminders',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'listReminders', tags, summary: 'List reminders, oldest first.', querystring: ListRemindersQuery, response: { 200: ReminderList, ...problemResponses } },
    },
    async (request) => await reminders.list(request.agentId, request.query),
  )

  app.get(
    '/reminders/due',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'listDueReminders',
        tags,
        summary: 'Live reminders whose next fire time is at or before as_of (default now), oldest first (cursor: the last id seen).',
        querystring: DueQuery,
        response: { 200: ReminderList, ...problemResponses },
      },
    },
    async (request) => {
      const { as_of, limit, cursor } = request.query
      const asOf = as_of === undefined ? undefined : requestInstant(as_of, fieldPath('querystring', 'as_of'))
      return await reminders.due(request.agentId, asOf, { limit, cursor })
    },
  )

  app.get(
    '/reminders/search',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'searchReminders',
        tags,
        summary: 'Full-text search over title, body, tags and pattern, best first (ranked by BM25 on SQLite, ts_rank on PostgreSQL).',
        querystring: SearchQuery,
        response: { 200: SearchResults, ...problemResponses },
      },
    },
    async (request) => await reminderSearch.search(request.agentId, request.query.q, request.query.limit),
  )

  app.get(
    '/reminders/:id',
    { config: { auth: 'agent' }, schema: { operationId: 'getReminder', tags, summary: 'Get a reminder.', params: ReminderParams, response: { 200: Reminder, ...problemResponses } } },
    async (request) => await reminders.get(request.agentId, request.params.id),
  )

  app.patch(
    '/reminders/:id',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'updateReminder',
        tags,
        summary: 'Change the fields given; a new trigger re-plans the reminder.',
        params: ReminderParams,
        body: PatchReminder,
        response: { 200: Reminder, ...problemResponses },
      },
    },
    async (request) => await reminders.patch(request.agentId, request.params.id, request.body),
  )

  app.delete(
    '/reminders/:id',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'deleteReminder', tags, summary: 'Delete a reminder.', params: ReminderParams, response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses } },
    },
    async (request, reply) => {
      await reminders.delete(request.agentId, request.params.id)
      return reply.code(204).send(null)
    },
  )

  for (const action of ['complete', 'dismiss', 'trigger'] as const) {
    const summary = {
      complete: 'Mark the reminder completed (409 if already completed or dismissed).',
      dismiss: 'Dismiss the reminder (409 if already completed or dismissed).',
      trigger: 'Fire the reminder now, as the scheduler would.',
    }[action]
    app.post(
      `/reminders/:id/${action}`,
      { config: { auth: 'agent' }, schema: { operationId: `${action}Reminder`, tags, summary, params: ReminderParams, response: { 200: Reminder, ...problemResponses } } },
      async (request) => await reminders[action](request.agentId, request.params.id),
    )
  }

  app.post(
    '/reminders/:id/snooze',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'snoozeReminder',
        tags,
        summary:
          'Snooze for `minutes` or until `until` (exactly one: both or neither is a 400), clamped to the priority bounds. A delivered reminder fires again at the snooze end; one never delivered at the later of the snooze end and its own next fire time, never earlier.',
        params: ReminderParams,
        body: SnoozeBody,
        response: { 200: SnoozedReminder, ...problemResponses },
      },
    },
    async (request) => await reminders.snooze(request.agentId, request.params.id, request.body),
  )

  app.get(
    '/reminders/:id/occurrences',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'listReminderOccurrences',
        tags,
        summary: 'The next fire times after `from` (default now), in UTC.',
        params: ReminderParams,
        querystring: OccurrencesQuery,
        response: { 200: Type.Object({ items: Type.Array(Type.String({ format: 'date-time' })) }), ...problemResponses },
      },
    },
    async (request) => ({ items: await reminders.occurrences(request.agentId, request.params.id, request.query.count, request.query.from) }),
  )

  app.get(
    '/settings',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'getSettings', tags: ['settings'], summary: "The agent's timezone, quiet hours, quota and turn budget.", response: { 200: Settings, ...problemResponses } },
    },
    async (request) => await settings.get(request.agentId),
  )

  app.put(
    '/settings',
    {
      config: { auth: 'agent' },
      schema: { operationId: 'updateSettings', tags: ['settings'], summary: 'Replace the fields given, keep the rest.', body: SettingsUpdate, response: { 200: Settings, ...problemResponses } },
    },
    async (request) => await settings.put(request.agentId, request.body),
  )

  app.post(
    '/turns',
    {
      config: { auth: 'agent' },
      schema: {
        operationId: 'startTurn',
        tags: ['turns'],
        summary: 'What to inject before the next LLM call: due and context-matched reminders (and session parts) within the token budget.',
        body: TurnBody,
        response: { 200: TurnResult, ...problemResponses },
      },
    },
    async (request) => await turns.start(request.agentId, request.body),
  )
}
