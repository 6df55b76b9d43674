/**
 * Every SQL statement over subscriptions (`webhooks`), and what the API does to their deliveries
 * and attempts; the dispatcher's own statements are in delivery-store.ts, the outbox's in
 * outbox.ts. Every statement reached from a route is scoped by agent_id or follows a scoped read.
 * Row types come from the Drizzle schema (src/db/schema/webhooks.ts).
 */
import type Database from 'better-sqlite3'
import type { InferSelectModel } from 'drizzle-orm'
import { preparer, type Stmt } from '../db/lazy-statement.js'
import type { webhookAttempts, webhooks } from '../db/schema/index.js'

type Db = { dbColumnNames: true }
export type WebhookRow = InferSelectModel<typeof webhooks, Db>
export type AttemptRow = InferSelectModel<typeof webhookAttempts, Db>

type Change = Pick<WebhookRow, 'id' | 'url' | 'event_types' | 'description' | 'status' | 'disabled_reason' | 'failing_since' | 'updated_at'>

export class WebhookRepository {
  private readonly oneRow: Stmt<[string, string], WebhookRow>
  private readonly insertRow: Stmt<[WebhookRow], WebhookRow>
  private readonly page: Stmt<[string, string, number], WebhookRow>
  private readonly updateRow: Stmt<[Change], WebhookRow>
  private readonly removeRow: Stmt<[string, string]>
  private readonly rotateRow: Stmt<[{ id: string; secret: string; previous_secret: string; expires: number; now: number }]>
  private readonly resumeRows: Stmt<[{ id: string; now: number }]>
  private readonly pauseRows: Stmt<[{ id: string; now: number }]>
  private readonly newestAttempts: Stmt<[string, string, number], AttemptRow>
  private readonly attemptsBefore: Stmt<[string, string, string, number], AttemptRow>
  private readonly deliveryRow: Stmt<[string, string, string], { claimed_at: number | null }>
  private readonly requeueRow: Stmt<[{ agent_id: string; webhook_id: string; message_id: string; now: number }]>

  constructor(sqlite: Database.Database) {
    const prepare = preparer(sqlite)
    this.oneRow = prepare('SELECT * FROM webhooks WHERE agent_id = ? AND id = ?')
    this.insertRow = prepare(`INSERT INTO webhooks (id, agent_id, url, event_types, description, status, disabled_reason, secret,
        previous_secret, previous_secret_expires_at, failing_since, created_at, updated_at)
      VALUES (@id, @agent_id, @url, @event_types, @description, @status, @disabled_reason, @secret,
        @previous_secret, @previous_secret_expires_at, @failing_since, @created_at, @updated_at) RETURNING *`)
    this.page = prepare('SELECT * FROM webhooks WHERE agent_id = ? AND id > ? ORDER BY id LIMIT ?')
    this.updateRow = prepare(`UPDATE webhooks SET url = @url, event_types = @event_types, description = @description, status = @status,
        disabled_reason = @disabled_reason, failing_since = @failing_since, updated_at = @updated_at
      WHERE id = @id RETURNING *`)
    this.removeRow = prepare('DELETE FROM webhooks WHERE agent_id = ? AND id = ?')
    this.rotateRow = prepare(`UPDATE webhooks SET secret = @secret, previous_secret = @previous_secret,
        previous_secret_expires_at = @expires, updated_at = @now WHERE id = @id`)
    this.resumeRows = prepare(`UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = @now, updated_at = @now
      WHERE webhook_id = @id AND state = 'paused'`)
    this.pauseRows = prepare(`UPDATE webhook_deliveries SET state = 'paused', claimed_at = NULL, updated_at = @now
      WHERE webhook_id = @id AND state = 'pending'`)
    this.newestAttempts = prepare('SELECT * FROM webhook_attempts WHERE agent_id = ? AND webhook_id = ? ORDER BY id DESC LIMIT ?')
    this.attemptsBefore = prepare('SELECT * FROM webhook_attempts WHERE agent_id = ? AND webhook_id = ? AND id < ? ORDER BY id DESC LIMIT ?')
    this.deliveryRow = prepare('SELECT claimed_at FROM webhook_deliveries WHERE agent_id = ? AND webhook_id = ? AND message_id = ?')
    // A delivery in flight (claimed) is left alone: resetting its claim could send it twice at once.
    this.requeueRow = prepare(`UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = @now, updated_at = @now
      WHERE agent_id = @agent_id AND webhook_id = @webhook_id AND message_id = @message_id AND claimed_at IS NULL`)
  }

  find(agentId: string, id: string): WebhookRow | undefined {
    return this.oneRow.get(agentId, id)
  }

  insert(row: WebhookRow): WebhookRow {
    return this.insertRow.get(row)!
  }

  /** One page in id (= creation) order plus one row, to know whether more follow. */
  list(agentId: string, limit: number, cursor = ''): WebhookRow[] {
    return this.page.all(agentId, cursor, limit + 1)
  }

  update(change: Change): WebhookRow {
    return this.updateRow.get(change)!
  }

  remove(agentId: string, id: string): boolean {
    return this.removeRow.run(agentId, id).changes > 0
  }

  rotate(id: string, secret: string, previousSecret: string, expires: number, now: number): void {
    this.rotateRow.run({ id, secret, previous_secret: previousSecret, expires, now })
  }

  /** Paused deliveries of the endpoint go out again now (it was re-enabled). */
  resumeDeliveries(id: string, now: number): void {
    this.resumeRows.run({ id, now })
  }

  /** Pending deliveries of the endpoint wait, claims released (it was disabled). */
  pauseDeliveries(id: string, now: number): void {
    this.pauseRows.run({ id, now })
  }

  /** Newest first, plus one row, to know whether more follow. */
  attempts(agentId: string, webhookId: string, limit: number, before?: string): AttemptRow[] {
    return before === undefined
      ? this.newestAttempts.all(agentId, webhookId, limit + 1)
      : this.attemptsBefore.all(agentId, webhookId, before, limit + 1)
  }

  /** The delivery's claim, or undefined when the endpoint never got that message. */
  delivery(agentId: string, webhookId: string, messageId: string): { claimed_at: number | null } | undefined {
    return this.deliveryRow.get(agentId, webhookId, messageId)
  }

  requeue(agentId: string, webhookId: string, messageId: string, now: number): void {
    this.requeueRow.run({ agent_id: agentId, webhook_id: webhookId, message_id: messageId, now })
  }
}
