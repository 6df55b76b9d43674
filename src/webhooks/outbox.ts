import type Database from 'better-sqlite3'
import { isoAt } from '../engine/clock.js'
import { newId } from '../ids.js'
import { preparer, type Stmt } from '../db/lazy-statement.js'

/** Event types of API.md. */
export type EventType =
  | 'reminder.triggered'
  | 'session.drift_detected'
  | 'session.loop_detected'
  | 'session.stalled'
  | 'session.budget_exceeded'
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
 * Every write to `webhook_messages` and the deliveries they start. Whoever reports an event owns
 * an Outbox on the connection it writes with, and enqueues inside the transaction that makes the
 * change the event reports, so the event exists exactly when that change commits.
 */
export class Outbox {
  private readonly message: Stmt<[string, string, string, string, number]>
  private readonly delivery: Stmt<[string, string, string, string, number, number, number]>
  private readonly active: Stmt<[string], { id: string; event_types: string }>
  private readonly one: Stmt<[string, string], { id: string; event_types: string }>

  constructor(sqlite: Database.Database) {
    const prepare = preparer(sqlite)
    this.message = prepare('INSERT INTO webhook_messages (id, agent_id, event_type, payload, created_at) VALUES (?, ?, ?, ?, ?)')
    this.delivery = prepare(`INSERT INTO webhook_deliveries
      (id, agent_id, message_id, webhook_id, state, attempts, next_attempt_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`)
    this.active = prepare("SELECT id, event_types FROM webhooks WHERE agent_id = ? AND status = 'active'")
    this.one = prepare('SELECT id, event_types FROM webhooks WHERE agent_id = ? AND id = ?')
  }

  /**
   * Writes one message and one pending delivery per active subscription of `agentId` that wants
   * `type`; nothing when none does (`message_id` is then the id the event would have had). The
   * body sent (and signed) is `{ type, timestamp, data }`, serialized once here. `onlyWebhookId`
   * targets one endpoint whatever its filter or status (the `webhook.test` event).
   */
  enqueue(agentId: string, type: EventType, data: unknown, nowMs: number, opts: { onlyWebhookId?: string } = {}): EnqueueResult {
    const messageId = newId('msg', nowMs)
    const targets =
      opts.onlyWebhookId !== undefined
        ? this.one.all(agentId, opts.onlyWebhookId)
        : this.active.all(agentId).filter((w) => subscribes(w.event_types, type))
    // Only deliveries ever read a message: one that no subscription wants would be a row per
    // session event that nothing reads or prunes.
    if (targets.length === 0) return { message_id: messageId, deliveries: 0 }
    this.message.run(messageId, agentId, type, JSON.stringify({ type, timestamp: isoAt(nowMs), data }), nowMs)
    for (const w of targets) this.delivery.run(newId('dlv', nowMs), agentId, messageId, w.id, nowMs, nowMs, nowMs)
    return { message_id: messageId, deliveries: targets.length }
  }
}
