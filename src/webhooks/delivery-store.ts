import type Database from 'better-sqlite3'
import type { DbHandle } from '../db/client.js'
import { lazyPrepare } from '../db/lazy-statement.js'
import { failingTooLong, nextAttemptAt, type AttemptOutcome, type DeliverySettings } from './retry-policy.js'

/** A claimed delivery with everything needed to send it. */
export interface ClaimedDelivery {
  id: string
  agentId: string
  messageId: string
  webhookId: string
  eventType: string
  payload: string
  attempts: number
  url: string
  secret: string
  previousSecret: string | null
  previousSecretExpiresAt: number | null
}

export interface AttemptRecord {
  id: string
  outcome: AttemptOutcome
  statusCode: number | null
  error: string | null
  durationMs: number
  createdAt: number
  nowMs: number
}

/**
 * The dispatcher's SQL: prepared statements on the raw connection (this is the hot path).
 * Claiming is one UPDATE … RETURNING over the partial index on pending `next_attempt_at`.
 */
export class DeliveryStore {
  private readonly claimStmt: Database.Statement
  private readonly loadStmt: Database.Statement
  private readonly claimTx: (nowMs: number, limit: number) => ClaimedDelivery[]
  private readonly releaseStmt: Database.Statement
  private readonly recordTx: (d: ClaimedDelivery, r: AttemptRecord) => void
  private readonly recordManyTx: (items: [ClaimedDelivery, AttemptRecord][]) => void
  private readonly disableTx: (webhookId: string, reason: string, nowMs: number) => void

  private readonly handle: DbHandle
  private readonly settings: DeliverySettings
  private readonly leaseMs: number
  private readonly random: () => number

  constructor(handle: DbHandle, settings: DeliverySettings, leaseMs: number, random: () => number = Math.random) {
    this.handle = handle
    this.settings = settings
    this.leaseMs = leaseMs
    this.random = random
    const db = handle.sqlite
    const prepare = (sql: string) => lazyPrepare(db, sql)
    this.claimStmt = prepare(`
      UPDATE webhook_deliveries SET claimed_at = @now, next_attempt_at = @lease, updated_at = @now
      WHERE id IN (SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= @now
                   ORDER BY next_attempt_at LIMIT @limit)
      RETURNING id`)
    // RETURNING cannot see joined tables, so the claimed rows are read back in one query.
    this.loadStmt = prepare(`
      SELECT d.id AS id, d.agent_id AS agentId, d.message_id AS messageId, d.webhook_id AS webhookId,
        m.event_type AS eventType, m.payload AS payload, d.attempts AS attempts, w.url AS url, w.secret AS secret,
        w.previous_secret AS previousSecret, w.previous_secret_expires_at AS previousSecretExpiresAt
      FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.id IN (SELECT value FROM json_each(?))`)
    this.claimTx = db.transaction((nowMs: number, limit: number) => {
      const ids = (this.claimStmt.all({ now: nowMs, lease: nowMs + this.leaseMs, limit }) as { id: string }[]).map((r) => r.id)
      return ids.length === 0 ? [] : (this.loadStmt.all(JSON.stringify(ids)) as ClaimedDelivery[])
    })
    this.releaseStmt = prepare(
      `UPDATE webhook_deliveries SET claimed_at = NULL, next_attempt_at = @now WHERE state = 'pending' AND claimed_at IS NOT NULL`,
    )
    const insertAttempt = prepare(`
      INSERT INTO webhook_attempts (id, agent_id, webhook_id, message_id, event_type, attempt, status_code, error,
        duration_ms, created_at, next_attempt_at)
      VALUES (@id, @agentId, @webhookId, @messageId, @eventType, @attempt, @statusCode, @error, @durationMs, @createdAt, @next)`)
    const updateDelivery = prepare(
      `UPDATE webhook_deliveries SET state = @state, attempts = @attempt, next_attempt_at = @next, claimed_at = NULL,
        updated_at = @now WHERE id = @id`,
    )
    const webhookState = prepare(`SELECT status, failing_since AS failingSince FROM webhooks WHERE id = ?`)
    const clearFailing = prepare(`UPDATE webhooks SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL`)
    const markFailing = prepare(`UPDATE webhooks SET failing_since = ? WHERE id = ? AND failing_since IS NULL`)
    const disable = prepare(
      `UPDATE webhooks SET status = 'disabled', disabled_reason = @reason, updated_at = @now WHERE id = @id AND status = 'active'`,
    )
    const pauseOthers = prepare(
      `UPDATE webhook_deliveries SET state = 'paused', claimed_at = NULL, updated_at = @now WHERE webhook_id = @id AND state = 'pending'`,
    )
    this.disableTx = db.transaction((webhookId: string, reason: string, nowMs: number) => {
      if (disable.run({ id: webhookId, reason, now: nowMs }).changes > 0) pauseOthers.run({ id: webhookId, now: nowMs })
    })
    const recordOne = (d: ClaimedDelivery, r: AttemptRecord) => {
      const w = webhookState.get(d.webhookId) as { status: string; failingSince: number | null } | undefined
      if (!w) return // the endpoint was deleted mid-flight; its rows went with it
      const attempt = d.attempts + 1
      let state: 'succeeded' | 'failed' | 'pending' | 'paused'
      let next: number | null = null
      let disableReason: string | null = null
      if (r.outcome.kind === 'success') {
        state = 'succeeded'
        clearFailing.run(d.webhookId)
      } else if (r.outcome.kind === 'gone') {
        state = 'failed'
        disableReason = 'The endpoint answered 410 Gone.'
      } else {
        next = nextAttemptAt(attempt, r.outcome, r.nowMs, this.settings, this.random)
        state = next === null ? 'failed' : 'pending'
        markFailing.run(r.nowMs, d.webhookId)
        const since = w.failingSince ?? r.nowMs
        if (failingTooLong(since, r.nowMs, this.settings.disableAfterHours)) {
          disableReason = `Every attempt has failed since ${new Date(since).toISOString()}.`
        }
      }
      if ((disableReason !== null || w.status === 'disabled') && state === 'pending') {
        // Pausing keeps the message, so re-enabling the endpoint delivers it.
        state = 'paused'
        next = null
      }
      insertAttempt.run({
        id: r.id,
        agentId: d.agentId,
        webhookId: d.webhookId,
        messageId: d.messageId,
        eventType: d.eventType,
        attempt,
        statusCode: r.statusCode,
        error: r.error,
        durationMs: r.durationMs,
        createdAt: r.createdAt,
        next,
      })
      updateDelivery.run({ id: d.id, state, attempt, next, now: r.nowMs })
      if (disableReason !== null) this.disableTx(d.webhookId, disableReason, r.nowMs)
    }
    this.recordTx = db.transaction(recordOne)
    // Completions that land in the same event-loop turn share one commit.
    this.recordManyTx = db.transaction((items: [ClaimedDelivery, AttemptRecord][]) => {
      for (const [d, r] of items) recordOne(d, r)
    })
  }

  claim(nowMs: number, limit: number): ClaimedDelivery[] {
    return this.claimTx(nowMs, limit)
  }

  record(d: ClaimedDelivery, r: AttemptRecord): void {
    this.recordTx(d, r)
  }

  recordMany(items: [ClaimedDelivery, AttemptRecord][]): void {
    if (items.length > 0) this.recordManyTx(items)
  }

  /** Single-process ownership: at start, any claim still held belongs to a process that died. */
  releaseStaleClaims(nowMs: number): number {
    return this.releaseStmt.run({ now: nowMs }).changes
  }

  get sqlite(): Database.Database {
    return this.handle.sqlite
  }
}
