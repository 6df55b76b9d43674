/**
 * Every SQL statement over subscriptions (`webhooks`), and what the API does to their deliveries
 * and attempts; the dispatcher's own statements are in delivery-repository.ts, the outbox's in
 * outbox.ts. Every statement reached from a route is scoped by agent_id or follows a scoped read.
 * Row types come from the Drizzle schema (src/db/schema/webhooks.ts). The SQL is the same on both
 * dialects.
 */
import type { InferSelectModel } from 'drizzle-orm'
import type { SqlDatabase } from '../db/database.js'
import type { webhookAttempts, webhooks } from '../db/schema/index.js'

type Db = { dbColumnNames: true }
export type WebhookRow = InferSelectModel<typeof webhooks, Db>
export type AttemptRow = InferSelectModel<typeof webhookAttempts, Db>

type Change = Pick<WebhookRow, 'id' | 'url' | 'event_types' | 'description' | 'status' | 'disabled_reason' | 'failing_since' | 'updated_at'>

const ONE = 'SELECT * FROM webhooks WHERE agent_id = ? AND id = ?'
const INSERT = `INSERT INTO webhooks (id, agent_id, url, event_types, description, status, disabled_reason, secret,
    previous_secret, previous_secret_expires_at, failing_since, created_at, updated_at)
  VALUES (@id, @agent_id, @url, @event_types, @description, @status, @disabled_reason, @secret,
    @previous_secret, @previous_secret_expires_at, @failing_since, @created_at, @updated_at) RETURNING *`
// Read-modify-write of a subscription (PATCH, rotation) locks its row on PostgreSQL, where another
// transaction may change it meanwhile; SQLite's write transactions already run one at a time.
const ONE_FOR_UPDATE = { sqlite: ONE, postgres: `${ONE} FOR UPDATE` }
const PAGE = 'SELECT * FROM webhooks WHERE agent_id = ? AND id > ? ORDER BY id LIMIT ?'
const UPDATE = `UPDATE webhooks SET url = @url, event_types = @event_types, description = @description, status = @status,
    disabled_reason = @disabled_reason, failing_since = @failing_since, updated_at = @updated_at
  WHERE id = @id RETURNING *`
const REMOVE = 'DELETE FROM webhooks WHERE agent_id = ? AND id = ?'
const ROTATE = `UPDATE webhooks SET secret = @secret, previous_secret = @previous_secret,
    previous_secret_expires_at = @expires, updated_at = @now WHERE id = @id`
const RESUME = `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = @now, updated_at = @now
  WHERE webhook_id = @id AND state = 'paused'`
const PAUSE = `UPDATE webhook_deliveries SET state = 'paused', claimed_at = NULL, updated_at = @now
  WHERE webhook_id = @id AND state = 'pending'`
const NEWEST_ATTEMPTS = 'SELECT * FROM webhook_attempts WHERE agent_id = ? AND webhook_id = ? ORDER BY id DESC LIMIT ?'
const ATTEMPTS_BEFORE = 'SELECT * FROM webhook_attempts WHERE agent_id = ? AND webhook_id = ? AND id < ? ORDER BY id DESC LIMIT ?'
const DELIVERY = 'SELECT claimed_at FROM webhook_deliveries WHERE agent_id = ? AND webhook_id = ? AND message_id = ?'
// A delivery in flight (claimed) is left alone: resetting its claim could send it twice at once.
const REQUEUE = `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = @now, updated_at = @now
  WHERE agent_id = @agent_id AND webhook_id = @webhook_id AND message_id = @message_id AND claimed_at IS NULL`

export class WebhookRepository {
  private readonly db: SqlDatabase
  private readonly oneForUpdate: string

  constructor(db: SqlDatabase) {
    this.db = db
    this.oneForUpdate = ONE_FOR_UPDATE[db.dialect]
  }

  find(agentId: string, id: string): Promise<WebhookRow | undefined> {
    return this.db.get<WebhookRow>(ONE, [agentId, id])
  }

  /** `find` that holds the row until the caller's transaction ends (call it inside one). */
  findForUpdate(agentId: string, id: string): Promise<WebhookRow | undefined> {
    return this.db.get<WebhookRow>(this.oneForUpdate, [agentId, id])
  }

  async insert(row: WebhookRow): Promise<WebhookRow> {
    return (await this.db.get<WebhookRow>(INSERT, row))!
  }

  /** One page in id (= creation) order plus one row, to know whether more follow. */
  list(agentId: string, limit: number, cursor = ''): Promise<WebhookRow[]> {
    return this.db.all<WebhookRow>(PAGE, [agentId, cursor, limit + 1])
  }

  async update(change: Change): Promise<WebhookRow> {
    return (await this.db.get<WebhookRow>(UPDATE, change))!
  }

  async remove(agentId: string, id: string): Promise<boolean> {
    return (await this.db.run(REMOVE, [agentId, id])) > 0
  }

  async rotate(id: string, secret: string, previousSecret: string, expires: number, now: number): Promise<void> {
    await this.db.run(ROTATE, { id, secret, previous_secret: previousSecret, expires, now })
  }

  /** Paused deliveries of the endpoint go out again now (it was re-enabled). */
  async resumeDeliveries(id: string, now: number): Promise<void> {
    await this.db.run(RESUME, { id, now })
  }

  /** Pending deliveries of the endpoint wait, claims released (it was disabled). */
  async pauseDeliveries(id: string, now: number): Promise<void> {
    await this.db.run(PAUSE, { id, now })
  }

  /** Newest first, plus one row, to know whether more follow. */
  attempts(agentId: string, webhookId: string, limit: number, before?: string): Promise<AttemptRow[]> {
    return before === undefined ? this.db.all<AttemptRow>(NEWEST_ATTEMPTS, [agentId, webhookId, limit + 1]) : this.db.all<AttemptRow>(ATTEMPTS_BEFORE, [agentId, webhookId, before, limit + 1])
  }

  /** The delivery's claim, or undefined when the endpoint never got that message. */
  delivery(agentId: string, webhookId: string, messageId: string): Promise<{ claimed_at: number | null } | undefined> {
    return this.db.get<{ claimed_at: number | null }>(DELIVERY, [agentId, webhookId, messageId])
  }

  async requeue(agentId: string, webhookId: string, messageId: string, now: number): Promise<void> {
    await this.db.run(REQUEUE, { agent_id: agentId, webhook_id: webhookId, message_id: messageId, now })
  }
}
