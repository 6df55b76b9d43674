import { idempotencyKey, unwrap, type Api } from '../call.js'
import type { Query, RequestBody, ResponseBody, Session, SessionCreate, StepInput, StepResult } from '../types.js'

/** Per-call options of a keyed write. */
export interface WriteOptions {
  /** Sent as `Idempotency-Key`; a fresh one is made per call when absent (retries reuse it). */
  idempotencyKey?: string
  signal?: AbortSignal
}

const path = (id: string) => ({ params: { path: { id } } })

/** Goal sessions: the goal, the per-step verdicts, drift, reminders and recitation. */
export class Sessions {
  private readonly api: Api
  constructor(api: Api) {
    this.api = api
  }

  create(body: SessionCreate, options: WriteOptions = {}): Promise<Session> {
    const headers = { 'idempotency-key': options.idempotencyKey ?? idempotencyKey() }
    return unwrap(this.api.POST('/v1/sessions', { body, headers, signal: options.signal }))
  }

  get(id: string): Promise<Session> {
    return unwrap(this.api.GET('/v1/sessions/{id}', path(id)))
  }

  list(query: Query<'listSessions'> = {}): Promise<ResponseBody<'listSessions'>> {
    return unwrap(this.api.GET('/v1/sessions', { params: { query } }))
  }

  update(id: string, body: RequestBody<'updateSession'>): Promise<Session> {
    return unwrap(this.api.PATCH('/v1/sessions/{id}', { ...path(id), body }))
  }

  async delete(id: string): Promise<void> {
    await unwrap(this.api.DELETE('/v1/sessions/{id}', path(id)))
  }

  setGoal(id: string, goal: string): Promise<Session> {
    return unwrap(this.api.PUT('/v1/sessions/{id}/goal', { ...path(id), body: { goal } }))
  }

  setPlan(id: string, steps: string[]): Promise<Session> {
    return unwrap(this.api.PUT('/v1/sessions/{id}/plan', { ...path(id), body: { steps } }))
  }

  /** The tools the agent has now: a step calling another is named at once (`verification.unknown_tool`). */
  setTools(id: string, tools: string[]): Promise<ResponseBody<'setTools'>> {
    return unwrap(this.api.PUT('/v1/sessions/{id}/tools', { ...path(id), body: { tools } }))
  }

  summary(id: string): Promise<ResponseBody<'getSessionSummary'>> {
    return unwrap(this.api.GET('/v1/sessions/{id}/summary', path(id)))
  }

  /**
   * Records a step and returns its verdict. Sent with an Idempotency-Key, so a retry after a
   * timeout, a 429 or a 5xx is answered with the first verdict, never counted twice.
   */
  step(id: string, step: StepInput, options: WriteOptions = {}): Promise<StepResult> {
    const headers = { 'idempotency-key': options.idempotencyKey ?? idempotencyKey() }
    return unwrap(this.api.POST('/v1/sessions/{id}/steps', { ...path(id), body: step, headers, signal: options.signal }))
  }

  steps(id: string, query: Query<'listSteps'> = {}): Promise<ResponseBody<'listSteps'>> {
    return unwrap(this.api.GET('/v1/sessions/{id}/steps', { params: { path: { id }, query } }))
  }

  driftCheck(id: string, body: RequestBody<'checkDrift'>, options: WriteOptions = {}): Promise<ResponseBody<'checkDrift'>> {
    const headers = { 'idempotency-key': options.idempotencyKey ?? idempotencyKey() }
    return unwrap(this.api.POST('/v1/sessions/{id}/drift-checks', { ...path(id), body, headers, signal: options.signal }))
  }

  driftTrend(id: string, query: Query<'getDriftTrend'> = {}): Promise<ResponseBody<'getDriftTrend'>> {
    return unwrap(this.api.GET('/v1/sessions/{id}/drift/trend', { params: { path: { id }, query } }))
  }

  driftEvents(id: string, query: Query<'listDriftEvents'> = {}): Promise<ResponseBody<'listDriftEvents'>> {
    return unwrap(this.api.GET('/v1/sessions/{id}/drift/events', { params: { path: { id }, query } }))
  }

  resetDrift(id: string): Promise<ResponseBody<'resetDrift'>> {
    return unwrap(this.api.POST('/v1/sessions/{id}/drift/reset', path(id)))
  }

  resetLoop(id: string): Promise<ResponseBody<'resetLoop'>> {
    return unwrap(this.api.POST('/v1/sessions/{id}/loop/reset', path(id)))
  }

  addPitfall(id: string, text: string): Promise<ResponseBody<'addPitfall'>> {
    return unwrap(this.api.POST('/v1/sessions/{id}/pitfalls', { ...path(id), body: { text } }))
  }

  addTriedApproach(id: string, text: string): Promise<ResponseBody<'addTriedApproach'>> {
    return unwrap(this.api.POST('/v1/sessions/{id}/tried-approaches', { ...path(id), body: { text } }))
  }

  /** The goal reminder to put before the next model call (`turn` is the agent's turn number). */
  reminder(id: string, query: Query<'getGoalReminder'>): Promise<ResponseBody<'getGoalReminder'>> {
    return unwrap(this.api.GET('/v1/sessions/{id}/reminder', { params: { path: { id }, query } }))
  }

  setContext(id: string, body: RequestBody<'setRecitationContext'>): Promise<ResponseBody<'setRecitationContext'>> {
    return unwrap(this.api.PUT('/v1/sessions/{id}/context', { ...path(id), body }))
  }

  /**
   * With `messages`: inserts the recitation block into them when it is due and records the
   * injection (POST). Without: reads the block for `iteration` without counting it (GET).
   */
  recitation(id: string, body: RequestBody<'injectRecitation'>): Promise<ResponseBody<'injectRecitation'>>
  recitation(id: string, query: Query<'getRecitation'>): Promise<ResponseBody<'getRecitation'>>
  recitation(
    id: string,
    input: RequestBody<'injectRecitation'> | Query<'getRecitation'>,
  ): Promise<ResponseBody<'injectRecitation'> | ResponseBody<'getRecitation'>> {
    if ('messages' in input) return unwrap(this.api.POST('/v1/sessions/{id}/recitation', { ...path(id), body: input }))
    return unwrap(this.api.GET('/v1/sessions/{id}/recitation', { params: { path: { id }, query: input } }))
  }
}
