import { and, desc, eq, gt, isNull, lt } from 'drizzle-orm'
import { SqliteUnitOfWork, type UnitOfWork } from '../db/unit-of-work.js'
import type { DbHandle } from '../db/client.js'
import { webhookAttempts, webhookDeliveries, webhooks } from '../db/schema/webhooks.js'
import { isoAt, type Clock } from '../engine/clock.js'
import { notFound } from '../errors.js'
import { newId } from '../ids.js'
import { pageOf, type Page } from '../pagination.js'
import { enqueue, type EventType } from './outbox.js'
import type { DeliverySettings } from './retry-policy.js'
import { ROTATION_OVERLAP_MS, generateSecret } from './sign.js'
import { assertWebhookUrl } from './url-guard.js'

type Row = typeof webhooks.$inferSelect

/** A subscription as the API shows it: never the secret (only create and rotate return it). */
export interface WebhookView {
  id: string
  url: string
  event_types: string[]
  description: string | null
  status: 'active' | 'disabled'
  disabled_reason: string | null
  failing_since: string | null
  created_at: string
  updated_at: string
}

export interface AttemptView {
  id: string
  message_id: string
  event_type: string
  attempt: number
  status_code: number | null
  error: string | null
  duration_ms: number
  created_at: string
  next_attempt_at: string | null
}

const iso = (ms: number | null) => (ms === null ? null : isoAt(ms))

function view(r: Row): WebhookView {
  return {
    id: r.id,
    url: r.url,
    event_types: JSON.parse(r.eventTypes) as string[],
    description: r.description,
    status: r.status,
    disabled_reason: r.disabledReason,
    failing_since: iso(r.failingSince),
    created_at: isoAt(r.createdAt),
    updated_at: isoAt(r.updatedAt),
  }
}

/** Webhook subscriptions of one agent; every query filters on `agent_id`. */
export class WebhooksService {
  private readonly handle: DbHandle
  private readonly clock: Clock
  private readonly settings: DeliverySettings

  constructor(handle: DbHandle, clock: Clock, settings: DeliverySettings) {
    this.handle = handle
    this.clock = clock
    this.settings = settings
  }

  private row(agentId: string, id: string): Row {
    const r = this.handle.db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.agentId, agentId), eq(webhooks.id, id)))
      .get()
    if (!r) throw notFound('webhook', id)
    return r
  }

  /** Checks the URL (DNS included), then inserts in `uow` (with the request's idempotency record, if any). */
  async create(
    agentId: string,
    input: { url: string; event_types?: EventType[] | undefined; description?: string | undefined },
    uow: UnitOfWork = new SqliteUnitOfWork(this.handle.sqlite),
  ): Promise<WebhookView & { secret: string }> {
    await assertWebhookUrl(input.url, this.settings.allowPrivateUrls)
    const now = this.clock()
    const secret = generateSecret()
    return uow.run(() => {
      const r = this.handle.db
        .insert(webhooks)
        .values({
          id: newId('whk', now),
          agentId,
          url: input.url,
          eventTypes: JSON.stringify([...new Set(input.event_types ?? [])]),
          description: input.description ?? null,
          secret,
          createdAt: now,
          updatedAt: now,
        })
        .returning()
        .get()
      return { ...view(r), secret }
    })
  }

  list(agentId: string, opts: { limit: number; cursor?: string | undefined }): Page<WebhookView> {
    const where = opts.cursor
      ? and(eq(webhooks.agentId, agentId), gt(webhooks.id, opts.cursor))
      : eq(webhooks.agentId, agentId)
    const rows = this.handle.db.select().from(webhooks).where(where).orderBy(webhooks.id).limit(opts.limit + 1).all()
    return pageOf(rows.map(view), opts.limit)
  }

  get(agentId: string, id: string): WebhookView {
    return view(this.row(agentId, id))
  }

  async update(
    agentId: string,
    id: string,
    patch: {
      url?: string | undefined
      event_types?: EventType[] | undefined
      description?: string | null | undefined
      status?: 'active' | 'disabled' | undefined
    },
  ): Promise<WebhookView> {
    this.row(agentId, id)
    if (patch.url !== undefined) await assertWebhookUrl(patch.url, this.settings.allowPrivateUrls)
    const now = this.clock()
    const db = this.handle.db
    return db.transaction((tx) => {
      const current = tx.select().from(webhooks).where(and(eq(webhooks.agentId, agentId), eq(webhooks.id, id))).get()
      if (!current) throw notFound('webhook', id)
      const set: Partial<Row> = { updatedAt: now }
      if (patch.url !== undefined) set.url = patch.url
      if (patch.event_types !== undefined) set.eventTypes = JSON.stringify([...new Set(patch.event_types)])
      if (patch.description !== undefined) set.description = patch.description
      if (patch.status === 'active' && current.status === 'disabled') {
        // Re-enabling resumes what was held back while disabled, and starts the failure clock afresh.
        Object.assign(set, { status: 'active', disabledReason: null, failingSince: null })
        tx.update(webhookDeliveries)
          .set({ state: 'pending', nextAttemptAt: now, updatedAt: now })
          .where(and(eq(webhookDeliveries.webhookId, id), eq(webhookDeliveries.state, 'paused')))
          .run()
      } else if (patch.status === 'disabled' && current.status === 'active') {
        Object.assign(set, { status: 'disabled', disabledReason: 'Disabled through the API.' })
        tx.update(webhookDeliveries)
          .set({ state: 'paused', claimedAt: null, updatedAt: now })
          .where(and(eq(webhookDeliveries.webhookId, id), eq(webhookDeliveries.state, 'pending')))
          .run()
      }
      return view(tx.update(webhooks).set(set).where(eq(webhooks.id, id)).returning().get()!)
    })
  }

  remove(agentId: string, id: string): void {
    this.row(agentId, id)
    this.handle.db.delete(webhooks).where(and(eq(webhooks.agentId, agentId), eq(webhooks.id, id))).run()
  }

  /** New secret now; the old one keeps signing (second signature) for 24 h so receivers can roll. */
  rotateSecret(agentId: string, id: string): { secret: string; previous_secret_expires_at: string } {
    const current = this.row(agentId, id)
    const now = this.clock()
    const secret = generateSecret()
    const expires = now + ROTATION_OVERLAP_MS
    this.handle.db
      .update(webhooks)
      .set({ secret, previousSecret: current.secret, previousSecretExpiresAt: expires, updatedAt: now })
      .where(eq(webhooks.id, id))
      .run()
    return { secret, previous_secret_expires_at: isoAt(expires) }
  }

  /** Queues a signed `webhook.test` message for this endpoint only. */
  sendTest(agentId: string, id: string): { message_id: string } {
    this.row(agentId, id)
    const now = this.clock()
    const r = enqueue(this.handle.sqlite, agentId, 'webhook.test', { webhook_id: id, message: 'A test event from goalkeeper.' }, now, {
      onlyWebhookId: id,
    })
    return { message_id: r.message_id }
  }

  /** The attempts log, newest first. */
  attempts(agentId: string, id: string, opts: { limit: number; cursor?: string | undefined }): Page<AttemptView> {
    this.row(agentId, id)
    const base = and(eq(webhookAttempts.agentId, agentId), eq(webhookAttempts.webhookId, id))
    const where = opts.cursor ? and(base, lt(webhookAttempts.id, opts.cursor)) : base
    const rows = this.handle.db
      .select()
      .from(webhookAttempts)
      .where(where)
      .orderBy(desc(webhookAttempts.id))
      .limit(opts.limit + 1)
      .all()
    return pageOf(
      rows.map((a) => ({
        id: a.id,
        message_id: a.messageId,
        event_type: a.eventType,
        attempt: a.attempt,
        status_code: a.statusCode,
        error: a.error,
        duration_ms: a.durationMs,
        created_at: isoAt(a.createdAt),
        next_attempt_at: iso(a.nextAttemptAt),
      })),
      opts.limit,
    )
  }

  /** Manual redelivery: the message goes out again now (one more attempt, same `webhook-id`). */
  retry(agentId: string, id: string, messageId: string): { message_id: string; status: 'queued' } {
    this.row(agentId, id)
    const now = this.clock()
    const match = and(
      eq(webhookDeliveries.agentId, agentId),
      eq(webhookDeliveries.webhookId, id),
      eq(webhookDeliveries.messageId, messageId),
    )
    const d = this.handle.db.select({ claimedAt: webhookDeliveries.claimedAt }).from(webhookDeliveries).where(match).get()
    if (!d) throw notFound('delivery', messageId)
    // A delivery in flight is left alone: resetting its claim could send it twice at once.
    if (d.claimedAt === null) {
      this.handle.db
        .update(webhookDeliveries)
        .set({ state: 'pending', nextAttemptAt: now, updatedAt: now })
        .where(and(match, isNull(webhookDeliveries.claimedAt)))
        .run()
    }
    return { message_id: messageId, status: 'queued' }
  }
}
