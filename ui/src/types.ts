/**
 * The /v1 shapes the dashboard reads: the client package's names for the bodies of the generated
 * OpenAPI types (type-only imports, nothing of the client is bundled), so they follow the API.
 */
import type { ResponseBody } from '../../client/src/types.js'

export type { Page, Reminder, Session, Webhook } from '../../client/src/types.js'

export type SessionDigest = ResponseBody<'listSessionDigests'>['items'][number]
export type Step = ResponseBody<'listSteps'>['items'][number]
export type NextTurn = ResponseBody<'getNextTurn'>
/** A reminder as an action returns it; a snooze says whether its duration was clamped. */
export type SnoozedReminder = ResponseBody<'snoozeReminder'>
export type Trigger = ResponseBody<'createReminder'>['trigger']
export type Attempt = ResponseBody<'listWebhookDeliveries'>['items'][number]
