import type { SqlDatabase } from '../db/database.js'
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
  /** The claim's time: with `attempts`, what proves the claim is still this one when the attempt is recorded. */
  claimedAt: number
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

// Aliases are quoted: PostgreSQL folds unquoted names to lower case.
const CLAIMED_COLUMNS = `d.id AS "id", d.agent_id AS "agentId", d.message_id AS "messageId", d.webhook_id AS "webhookId",
  m.event_type AS "eventType", m.payload AS "payload", d.attempts AS "attempts", d.claimed_at AS "claimedAt", w.url AS "url",
  w.secret AS "secret", w.previous_secret AS "previousSecret", w.previous_secret_expires_at AS "previousSecretExpiresAt"`

/**
 * A claim moves `next_attempt_at` forward by the lease and sets `claimed_at`: the row is hidden
 * from other claims until the lease ends, and then claimable again if no one recorded an attempt
 * (its claimer died). The range scan runs on the partial index of pending `next_attempt_at`.
 */
const CLAIM_SQLITE = `UPDATE webhook_deliveries SET claimed_at = @now, next_attempt_at = @lease, updated_at = @now
  WHERE id IN (SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= @now
               ORDER BY next_attempt_at LIMIT @limit)
  RETURNING id`
// RETURNING cannot see joined tables, so on SQLite the claimed rows are read back in one query.
const LOAD_SQLITE = `SELECT ${CLAIMED_COLUMNS}
  FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.id IN (SELECT value FROM json_each(?))`
// PostgreSQL: one statement; replicas claiming at once skip each other's locked rows instead of
// waiting for them, and a row another claim just moved forward fails `next_attempt_at <= now` on recheck.
const CLAIM_PG = `WITH due AS (
    SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= @now
    ORDER BY next_attempt_at LIMIT @limit FOR UPDATE SKIP LOCKED),
  claimed AS (
    UPDATE webhook_deliveries d SET claimed_at = @now, next_attempt_at = @lease, updated_at = @now
    FROM due WHERE d.id = due.id RETURNING d.*)
  SELECT ${CLAIMED_COLUMNS}
  FROM claimed d JOIN webhook_messages m ON m.id = d.message_id JOIN webhooks w ON w.id = d.webhook_id`

const RELEASE_ALL = `UPDATE webhook_deliveries SET claimed_at = NULL, next_attempt_at = @now
  WHERE state = 'pending' AND claimed_at IS NOT NULL`
// A claim given back unsent (shutdown): due at once, for any dispatcher, unless it changed hands meanwhile.
const RELEASE_ONE = `UPDATE webhook_deliveries SET claimed_at = NULL, next_attempt_at = @now
  WHERE id = @id AND state = 'pending' AND attempts = @attempts AND claimed_at = @claimedAt`
const INSERT_ATTEMPT = `INSERT INTO webhook_attempts (id, agent_id, webhook_id, message_id, event_type, attempt, status_code, error,
    duration_ms, created_at, next_attempt_at)
  VALUES (@id, @agentId, @webhookId, @messageId, @eventType, @attempt, @statusCode, @error, @durationMs, @createdAt, @next)`
// Only the claim's own holder records: a claimer whose lease ran out (and whose delivery another
// claim took over and recorded) changes nothing. A pause (claimed_at NULL) keeps the attempt count.
const UPDATE_DELIVERY = `UPDATE webhook_deliveries SET state = @state, attempts = @attempt, next_attempt_at = @next, claimed_at = NULL,
    updated_at = @now
  WHERE id = @id AND attempts = @attempts AND (claimed_at IS NULL OR claimed_at = @claimedAt)`
// PostgreSQL holds the endpoint's row while recording, so a disable by another replica or the API
// is either seen here or comes after (and pauses this delivery too). Batches lock in id order.
const WEBHOOK_STATE = 'SELECT status, failing_since AS "failingSince" FROM webhooks WHERE id = ?'
const WEBHOOK_STATE_SQL = { sqlite: WEBHOOK_STATE, postgres: `${WEBHOOK_STATE} FOR NO KEY UPDATE` }
const CLEAR_FAILING = 'UPDATE webhooks SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL'
const MARK_FAILING = 'UPDATE webhooks SET failing_since = ? WHERE id = ? AND failing_since IS NULL'
const DISABLE = `UPDATE webhooks SET status = 'disabled', disabled_reason = @reason, updated_at = @now WHERE id = @id AND status = 'active'`
const PAUSE_OTHERS = `UPDATE webhook_deliveries SET state = 'paused', claimed_at = NULL, updated_at = @now
  WHERE webhook_id = @id AND state = 'pending'`

/** The dispatcher's SQL: claiming due deliveries under a lease, and recording attempts. */
export class DeliveryRepository {
  private readonly db: SqlDatabase
  private readonly settings: DeliverySettings
  private readonly leaseMs: number
  private readonly random: () => number
  private readonly webhookState: string

  constructor(db: SqlDatabase, settings: DeliverySettings, leaseMs: number, random: () => number = Math.random) {
    this.db = db
    this.settings = settings
    this.leaseMs = leaseMs
    this.random = random
    this.webhookState = WEBHOOK_STATE_SQL[db.dialect]
  }

  /** Claims up to `limit` due deliveries for `leaseMs`. */
  async claim(nowMs: number, limit: number): Promise<ClaimedDelivery[]> {
    const params = { now: nowMs, lease: nowMs + this.leaseMs, limit }
    if (this.db.dialect === 'postgres') return this.db.all<ClaimedDelivery>(CLAIM_PG, params)
    const claimed = await this.db.transaction(async () => {
      const ids = (await this.db.all<{ id: string }>(CLAIM_SQLITE, params)).map((r) => r.id)
      return ids.length === 0 ? [] : this.db.all<ClaimedDelivery>(LOAD_SQLITE, [JSON.stringify(ids)])
    })
    // Under group commit the claim, and the fire that made a delivery, commit after this turn:
    // nothing is sent before they are durable (a crash in between sent a fire that then fired again).
    if (claimed.length > 0) await this.db.committed()
    return claimed
  }

  record(d: ClaimedDelivery, r: AttemptRecord): Promise<void> {
    return this.recordMany([[d, r]])
  }

  /** Records attempts in one transaction (completions of one event-loop turn share it). */
  async recordMany(items: [ClaimedDelivery, AttemptRecord][]): Promise<void> {
    if (items.length === 0) return
    // One lock order for every batch (endpoints by id), so two replicas' batches never deadlock.
    const sorted = [...items].sort(([a], [b]) => (a.webhookId < b.webhookId ? -1 : a.webhookId > b.webhookId ? 1 : 0))
    await this.db.transaction(async () => {
      for (const [d, r] of sorted) await this.recordOne(d, r)
    })
  }

  /**
   * Single-process ownership (SQLite): at start, any claim still held belongs to a process that
   * died. On PostgreSQL other replicas hold live claims; a dead one's claims come due again when
   * their lease ends, so nothing is released.
   */
  async releaseStaleClaims(nowMs: number): Promise<number> {
    if (this.db.dialect === 'postgres') return 0
    return this.db.run(RELEASE_ALL, { now: nowMs })
  }

  /** Gives back a claim whose delivery was abandoned unrecorded (shutting down): others need not wait for its lease. */
  async release(d: ClaimedDelivery, nowMs: number): Promise<boolean> {
    return (await this.db.run(RELEASE_ONE, { id: d.id, attempts: d.attempts, claimedAt: d.claimedAt, now: nowMs })) > 0
  }

  private async recordOne(d: ClaimedDelivery, r: AttemptRecord): Promise<void> {
    const w = await this.db.get<{ status: string; failingSince: number | null }>(this.webhookState, [d.webhookId])
    if (!w) return // the endpoint was deleted mid-flight; its rows went with it
    const attempt = d.attempts + 1
    let state: 'succeeded' | 'failed' | 'pending' | 'paused'
    let next: number | null = null
    let disableReason: string | null = null
    if (r.outcome.kind === 'success') {
      state = 'succeeded'
    } else if (r.outcome.kind === 'gone') {
      state = 'failed'
      disableReason = 'The endpoint answered 410 Gone.'
    } else {
      next = nextAttemptAt(attempt, r.outcome, r.nowMs, this.settings, this.random)
      state = next === null ? 'failed' : 'pending'
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
    const changed = await this.db.run(UPDATE_DELIVERY, {
      id: d.id,
      state,
      attempt,
      attempts: d.attempts,
      claimedAt: d.claimedAt,
      next,
      now: r.nowMs,
    })
    if (changed === 0) return // the claim was lost (lease ended, another claim recorded) or the row is gone
    if (r.outcome.kind === 'success') await this.db.run(CLEAR_FAILING, [d.webhookId])
    else if (r.outcome.kind === 'retry') await this.db.run(MARK_FAILING, [r.nowMs, d.webhookId])
    await this.db.run(INSERT_ATTEMPT, {
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
    if (disableReason !== null && (await this.db.run(DISABLE, { id: d.webhookId, reason: disableReason, now: r.nowMs })) > 0) {
      await this.db.run(PAUSE_OTHERS, { id: d.webhookId, now: r.nowMs })
    }
  }
}
