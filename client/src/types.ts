/**
 * Names for the request and response bodies of the generated OpenAPI types, so the hand-written
 * layer and its users can say `Session` instead of a path through `operations`.
 */
import type { components, operations } from './generated/openapi.js'

type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never
type SuccessOf<R> = { [S in keyof R]: S extends 200 | 201 | 202 ? JsonOf<R[S]> : never }[keyof R]

/** The JSON body an operation accepts. */
export type RequestBody<Op extends keyof operations> = operations[Op] extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never
/** The JSON body of an operation's success response. */
export type ResponseBody<Op extends keyof operations> = SuccessOf<operations[Op]['responses']>
/** An operation's query string. */
export type Query<Op extends keyof operations> = operations[Op]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never

export type Problem = components['schemas']['Problem']

export type Session = ResponseBody<'createSession'>
export type SessionCreate = RequestBody<'createSession'>
export type SessionConfig = NonNullable<SessionCreate['config']>
export type GoalState = Session['state']
export type StepInput = RequestBody<'recordStep'>
export type StepResult = ResponseBody<'recordStep'>
export type StepVerification = StepResult['verification']
export type RecommendedAction = StepVerification['recommended_action']
export type DriftCheck = StepResult['drift']
export type GoalReminder = ResponseBody<'getGoalReminder'>
export type Recitation = ResponseBody<'getRecitation'>
export type RecitationInjection = ResponseBody<'injectRecitation'>
export type RecitationInput = RequestBody<'injectRecitation'>
export type ChatMessage = RecitationInput['messages'][number]

export type Reminder = ResponseBody<'createReminder'>
export type ReminderCreate = RequestBody<'createReminder'>
export type Settings = ResponseBody<'getSettings'>
export type TurnInput = RequestBody<'startTurn'>
export type Turn = ResponseBody<'startTurn'>

export type Webhook = ResponseBody<'getWebhook'>
export type WebhookCreated = ResponseBody<'createWebhook'>
export type WebhookDelivery = ResponseBody<'listWebhookDeliveries'>['items'][number]

/** One page of a list endpoint. */
export interface Page<T> {
  items: T[]
  next_cursor: string | null
}
