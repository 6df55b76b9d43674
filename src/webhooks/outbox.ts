import type { SqlDatabase } from '../db/database.js'
import { isoAt } from '../engine/clock.js'
import { newId } from '../ids.js'

/** The event types a webhook can subscribe to (docs/reference.md describes each). */
export const EVENT_TYPES = [
  'reminder.triggered',
  'session.drift_detected',
  'session.loop_detected',
  'session.stalled',
  'session.budget_exceeded',
  'session.stopped',
  'webhook.test',
  'session.budget_warning',
  'agent.budget_warning',
  'agent.budget_exceeded',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

export interface EnqueueResult {
  message_id: string
  deliveries: number
}

/** True when a subscription with this `event_types` JSON wants `type` (empty list = everything). */
function subscribes(eventTypesJson: string, type: string): boolean {
  const list = JSON.parse(eventTypesJson) as string[]
  return list.length === 0 || list.includes(type)
}

const INSERT_MESSAGE = 'INSERT INTO webhook_messages (id, agent_id, event_type, payload, created_at) VALUES (?, ?, ?, ?, ?)'
const INSERT_DELIVERY = `INSERT INTO webhook_deliveries
  (id, agent_id, message_id, webhook_id, state, attempts, next_attempt_at, created_at, updated_at)
  VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`
const ACTIVE = "SELECT id, event_types FROM webhooks WHERE agent_id = ? AND status = 'active'"
const ONE = 'SELECT id, event_types FROM webhooks WHERE agent_id = ? AND id = ?'

/**
 * Every write to `webhook_messages` and the deliveries they start. Whoever reports an event owns
 * an Outbox on the database it writes to, and enqueues inside the transaction that makes the
 * change the event reports, so the event exists exactly when that change commits.
 */
export class Outbox {
  private readonly db: SqlDatabase

  constructor(db: SqlDatabase) {
    this.db = db
  }

  /**
   * Writes one message and one pending delivery per active subscription of `agentId` that wants
   * `type`; nothing when none does (`message_id` is then the id the event would have had). The
   * body sent (and signed) is `{ type, timestamp, data }`, serialized once here. `onlyWebhookId`
   * targets one endpoint whatever its filter or status (the `webhook.test` event).
   */
  async enqueue(agentId: string, type: EventType, data: unknown, nowMs: number, opts: { onlyWebhookId?: string } = {}): Promise<EnqueueResult> {
    const messageId = newId('msg', nowMs)
    type Target = { id: string; event_types: string }
    const targets =
      opts.onlyWebhookId !== undefined ? await this.db.all<Target>(ONE, [agentId, opts.onlyWebhookId]) : (await this.db.all<Target>(ACTIVE, [agentId])).filter((w) => subscribes(w.event_types, type))
    // Only deliveries ever read a message: one that no subscription wants would be a row per
    // session event that nothing reads or prunes.
    if (targets.length === 0) return { message_id: messageId, deliveries: 0 }
    await this.db.run(INSERT_MESSAGE, [messageId, agentId, type, JSON.stringify({ type, timestamp: isoAt(nowMs), data }), nowMs])
    for (const w of targets) await this.db.run(INSERT_DELIVERY, [newId('dlv', nowMs), agentId, messageId, w.id, nowMs, nowMs, nowMs])
    return { message_id: messageId, deliveries: targets.length }
  }
}
