import type Database from 'better-sqlite3'
import { isoAt } from '../engine/clock.js'
import { newId } from '../ids.js'
import { perConnection } from '../db/lazy-statement.js'

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

interface Statements {
  message: Database.Statement
  delivery: Database.Statement
  active: Database.Statement<[string], { id: string; event_types: string }>
  one: Database.Statement<[string, string], { id: string; event_types: string }>
}

// Prepared once per connection: enqueue sits on the scheduler's hot path (thousands per second).
const statements = perConnection(
  (sqlite): Statements => ({
    message: sqlite.prepare(
      'INSERT INTO webhook_messages (id, agent_id, event_type, payload, created_at) VALUES (?, ?, ?, ?, ?)',
    ),
    delivery: sqlite.prepare(`INSERT INTO webhook_deliveries
      (id, agent_id, message_id, webhook_id, state, attempts, next_attempt_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`),
    active: sqlite.prepare("SELECT id, event_types FROM webhooks WHERE agent_id = ? AND status = 'active'"),
    one: sqlite.prepare('SELECT id, event_types FROM webhooks WHERE agent_id = ? AND id = ?'),
  }),
)

/**
 * Writes one outbox message and one pending delivery per active subscription of `agentId` that
 * wants `type`; nothing when none does (`message_id` is then the id the event would have had).
 * Call it inside the transaction that makes the change the event reports, so the event exists
 * exactly when that change commits (better-sqlite3 transactions belong to the
 * connection, so raw and drizzle writes on it share the transaction):
 *
 *   handle.sqlite.transaction(() => {
 *     …update the session…
 *     enqueue(handle.sqlite, agentId, 'session.drift_detected', { session_id, … }, now)
 *   })()
 *
 * The body sent (and signed) is `{ type, timestamp, data }`, serialized once here.
 * `onlyWebhookId` targets one endpoint whatever its filter or status (the `webhook.test` event).
 */
export function enqueue(
  sqlite: Database.Database,
  agentId: string,
  type: EventType,
  data: unknown,
  nowMs: number,
  opts: { onlyWebhookId?: string } = {},
): EnqueueResult {
  const s = statements(sqlite)
  const messageId = newId('msg', nowMs)
  const targets =
    opts.onlyWebhookId !== undefined
      ? s.one.all(agentId, opts.onlyWebhookId)
      : s.active.all(agentId).filter((w) => subscribes(w.event_types, type))
  // Only deliveries ever read a message: one that no subscription wants would be a row per session
  // event that nothing reads or prunes.
  if (targets.length === 0) return { message_id: messageId, deliveries: 0 }
  s.message.run(messageId, agentId, type, JSON.stringify({ type, timestamp: isoAt(nowMs), data }), nowMs)
  for (const w of targets) s.delivery.run(newId('dlv', nowMs), agentId, messageId, w.id, nowMs, nowMs, nowMs)
  return { message_id: messageId, deliveries: targets.length }
}
