import { and, eq } from 'drizzle-orm'
import type { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core'
import type * as schema from '../db/schema/index.js'
import { webhookDeliveries, webhookMessages, webhooks } from '../db/schema/webhooks.js'
import { isoAt } from '../engine/clock.js'
import { newId } from '../ids.js'

/** A drizzle handle or a transaction from `db.transaction(tx => …)`: enqueue joins the caller's. */
export type Tx = BaseSQLiteDatabase<'sync', unknown, typeof schema>

/** Event types of API.md. */
export type EventType =
  | 'reminder.triggered'
  | 'session.drift_detected'
  | 'session.loop_detected'
  | 'session.stalled'
  | 'webhook.test'

export interface EnqueueResult {
  message_id: string
  deliveries: number
}

/** True when a subscription with this `event_types` JSON wants `type` (empty list = everything). */
export function subscribes(eventTypesJson: string, type: string): boolean {
  const list = JSON.parse(eventTypesJson) as string[]
  return list.length === 0 || list.includes(type)
}

/**
 * Writes one outbox message and one pending delivery per active subscription of `agentId` that
 * wants `type`, inside the caller's transaction, so the event exists exactly when the state
 * change that caused it commits. Call it from services like:
 *
 *   db.transaction((tx) => {
 *     tx.update(sessions)…                      // the state change
 *     enqueue(tx, agentId, 'session.drift_detected', { session_id, … }, now)
 *   })
 *
 * The body sent (and signed) is `{ type, timestamp, data }`, serialized once here.
 * `onlyWebhookId` targets one endpoint whatever its filter (the `webhook.test` event).
 */
export function enqueue(
  tx: Tx,
  agentId: string,
  type: EventType,
  data: unknown,
  nowMs: number,
  opts: { onlyWebhookId?: string } = {},
): EnqueueResult {
  const messageId = newId('msg', nowMs)
  const payload = JSON.stringify({ type, timestamp: isoAt(nowMs), data })
  tx.insert(webhookMessages).values({ id: messageId, agentId, eventType: type, payload, createdAt: nowMs }).run()
  const where = opts.onlyWebhookId
    ? and(eq(webhooks.agentId, agentId), eq(webhooks.id, opts.onlyWebhookId))
    : and(eq(webhooks.agentId, agentId), eq(webhooks.status, 'active'))
  const targets = tx
    .select({ id: webhooks.id, eventTypes: webhooks.eventTypes })
    .from(webhooks)
    .where(where)
    .all()
    .filter((w) => opts.onlyWebhookId !== undefined || subscribes(w.eventTypes, type))
  if (targets.length > 0) {
    tx.insert(webhookDeliveries)
      .values(
        targets.map((w) => ({
          id: newId('dlv', nowMs),
          agentId,
          messageId,
          webhookId: w.id,
          state: 'pending' as const,
          nextAttemptAt: nowMs,
          createdAt: nowMs,
          updatedAt: nowMs,
        })),
      )
      .run()
  }
  return { message_id: messageId, deliveries: targets.length }
}
