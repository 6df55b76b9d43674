import { idempotencyKey, unwrap, type Api } from '../call.js'
import type { Query, Reminder, ReminderCreate, RequestBody, ResponseBody, Settings as SettingsBody, Turn, TurnInput } from '../types.js'
import type { WriteOptions } from './sessions.js'

const path = (id: string) => ({ params: { path: { id } } })

/** Scheduled, recurring and context reminders of the calling agent. */
export class Reminders {
  private readonly api: Api
  constructor(api: Api) {
    this.api = api
  }

  create(body: ReminderCreate, options: WriteOptions = {}): Promise<Reminder> {
    const headers = { 'idempotency-key': options.idempotencyKey ?? idempotencyKey() }
    return unwrap(this.api.POST('/v1/reminders', { body, headers, signal: options.signal }))
  }

  list(query: Query<'listReminders'> = {}): Promise<ResponseBody<'listReminders'>> {
    return unwrap(this.api.GET('/v1/reminders', { params: { query } }))
  }

  get(id: string): Promise<Reminder> {
    return unwrap(this.api.GET('/v1/reminders/{id}', path(id)))
  }

  update(id: string, body: RequestBody<'updateReminder'>): Promise<Reminder> {
    return unwrap(this.api.PATCH('/v1/reminders/{id}', { ...path(id), body }))
  }

  async delete(id: string): Promise<void> {
    await unwrap(this.api.DELETE('/v1/reminders/{id}', path(id)))
  }

  complete(id: string): Promise<Reminder> {
    return unwrap(this.api.POST('/v1/reminders/{id}/complete', path(id)))
  }

  dismiss(id: string): Promise<Reminder> {
    return unwrap(this.api.POST('/v1/reminders/{id}/dismiss', path(id)))
  }

  /** Fires the reminder now. */
  trigger(id: string): Promise<Reminder> {
    return unwrap(this.api.POST('/v1/reminders/{id}/trigger', path(id)))
  }

  snooze(id: string, body: RequestBody<'snoozeReminder'>): Promise<ResponseBody<'snoozeReminder'>> {
    return unwrap(this.api.POST('/v1/reminders/{id}/snooze', { ...path(id), body }))
  }

  due(query: Query<'listDueReminders'> = {}): Promise<ResponseBody<'listDueReminders'>> {
    return unwrap(this.api.GET('/v1/reminders/due', { params: { query } }))
  }

  search(query: Query<'searchReminders'>): Promise<ResponseBody<'searchReminders'>> {
    return unwrap(this.api.GET('/v1/reminders/search', { params: { query } }))
  }

  occurrences(id: string, query: Query<'listReminderOccurrences'> = {}): Promise<ResponseBody<'listReminderOccurrences'>> {
    return unwrap(this.api.GET('/v1/reminders/{id}/occurrences', { params: { path: { id }, query } }))
  }
}

/** What to inject before the next LLM call: due and matching reminders, goal reminder, recitation. */
export class Turns {
  private readonly api: Api
  constructor(api: Api) {
    this.api = api
  }

  start(body: TurnInput, options: { signal?: AbortSignal } = {}): Promise<Turn> {
    return unwrap(this.api.POST('/v1/turns', { body, signal: options.signal }))
  }
}

/** The agent's reminder settings (timezone, quiet hours, limits). */
export class Settings {
  private readonly api: Api
  constructor(api: Api) {
    this.api = api
  }

  get(): Promise<SettingsBody> {
    return unwrap(this.api.GET('/v1/settings'))
  }

  update(body: RequestBody<'updateSettings'>): Promise<SettingsBody> {
    return unwrap(this.api.PUT('/v1/settings', { body }))
  }
}
