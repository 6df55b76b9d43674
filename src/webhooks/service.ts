import type { SqlDatabase } from '../db/database.js'
import { UnitOfWork } from '../db/unit-of-work.js'
import { isoAt, type Clock } from '../engine/clock.js'
import { notFound } from '../errors.js'
import { newId } from '../ids.js'
import { pageOf, type Page } from '../pagination.js'
import { Outbox, type EventType } from './outbox.js'
import { WebhookRepository, type AttemptRow, type WebhookRow } from './repository.js'
import type { DeliverySettings } from './retry-policy.js'
import { ROTATION_OVERLAP_MS, generateSecret } from './sign.js'
import { assertWebhookUrl } from './url-guard.js'

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

function view(r: WebhookRow): WebhookView {
  return {
    id: r.id,
    url: r.url,
    event_types: JSON.parse(r.event_types) as string[],
    description: r.description,
    status: r.status,
    disabled_reason: r.disabled_reason,
    failing_since: iso(r.failing_since),
    created_at: isoAt(r.created_at),
    updated_at: isoAt(r.updated_at),
  }
}

function attemptView(a: AttemptRow): AttemptView {
  return {
    id: a.id,
    message_id: a.message_id,
    event_type: a.event_type,
    attempt: a.attempt,
    status_code: a.status_code,
    error: a.error,
    duration_ms: a.duration_ms,
    created_at: isoAt(a.created_at),
    next_attempt_at: iso(a.next_attempt_at),
  }
}

/** Webhook subscriptions of one agent; every query filters on `agent_id`. */
export class WebhooksService {
  private readonly db: SqlDatabase
  private readonly repo: WebhookRepository
  private readonly outbox: Outbox
  private readonly clock: Clock
  private readonly settings: DeliverySettings

  constructor(db: SqlDatabase, clock: Clock, settings: DeliverySettings) {
    this.db = db
    this.repo = new WebhookRepository(db)
    this.outbox = new Outbox(db)
    this.clock = clock
    this.settings = settings
  }

  private async row(agentId: string, id: string, lock = false): Promise<WebhookRow> {
    const r = lock ? await this.repo.findForUpdate(agentId, id) : await this.repo.find(agentId, id)
    if (!r) throw notFound('webhook', id)
    return r
  }

  /** Checks the URL (DNS included), then inserts in `uow` (with the request's idempotency record, if any). */
  async create(
    agentId: string,
    input: { url: string; event_types?: EventType[] | undefined; description?: string | undefined },
    uow: UnitOfWork = new UnitOfWork(this.db),
  ): Promise<WebhookView & { secret: string }> {
    await assertWebhookUrl(input.url, this.settings.allowPrivateUrls)
    const now = this.clock()
    const secret = generateSecret()
    return uow.run(async () => {
      const r = await this.repo.insert({
        id: newId('whk', now),
        agent_id: agentId,
        url: input.url,
        event_types: JSON.stringify([...new Set(input.event_types ?? [])]),
        description: input.description ?? null,
        status: 'active',
        disabled_reason: null,
        secret,
        previous_secret: null,
        previous_secret_expires_at: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
      })
      return { ...view(r), secret }
    })
  }

  async list(agentId: string, opts: { limit: number; cursor?: string | undefined }): Promise<Page<WebhookView>> {
    return pageOf((await this.repo.list(agentId, opts.limit, opts.cursor)).map(view), opts.limit)
  }

  async get(agentId: string, id: string): Promise<WebhookView> {
    return view(await this.row(agentId, id))
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
    await this.row(agentId, id)
    if (patch.url !== undefined) await assertWebhookUrl(patch.url, this.settings.allowPrivateUrls)
    const now = this.clock()
    return this.db.transaction(async () => {
      // Read again inside the transaction (the URL check above awaited), holding the row so a
      // concurrent change cannot be overwritten with what this one read.
      const current = await this.row(agentId, id, true)
      const next = {
        id,
        url: patch.url ?? current.url,
        event_types: patch.event_types === undefined ? current.event_types : JSON.stringify([...new Set(patch.event_types)]),
        description: patch.description === undefined ? current.description : patch.description,
        status: current.status,
        disabled_reason: current.disabled_reason,
        failing_since: current.failing_since,
        updated_at: now,
      }
      if (patch.status === 'active' && current.status === 'disabled') {
        // Re-enabling resumes what was held back while disabled, and starts the failure clock afresh.
        Object.assign(next, { status: 'active', disabled_reason: null, failing_since: null })
        await this.repo.resumeDeliveries(id, now)
      } else if (patch.status === 'disabled' && current.status === 'active') {
        Object.assign(next, { status: 'disabled', disabled_reason: 'Disabled through the API.' })
        await this.repo.pauseDeliveries(id, now)
      }
      return view(await this.repo.update(next))
    })
  }

  async remove(agentId: string, id: string): Promise<void> {
    if (!(await this.repo.remove(agentId, id))) throw notFound('webhook', id)
  }

  /** New secret now; the old one keeps signing (second signature) for 24 h so receivers can roll. */
  async rotateSecret(agentId: string, id: string): Promise<{ secret: string; previous_secret_expires_at: string }> {
    const now = this.clock()
    const secret = generateSecret()
    const expires = now + ROTATION_OVERLAP_MS
    // The row is held: two rotations at once must not both keep the same old secret.
    await this.db.transaction(async () => {
      const current = await this.row(agentId, id, true)
      await this.repo.rotate(id, secret, current.secret, expires, now)
    })
    return { secret, previous_secret_expires_at: isoAt(expires) }
  }

  /** Queues a signed `webhook.test` message for this endpoint only. */
  async sendTest(agentId: string, id: string): Promise<{ message_id: string }> {
    await this.row(agentId, id)
    const now = this.clock()
    // The message and its delivery commit together.
    const r = await this.db.transaction(() => this.outbox.enqueue(agentId, 'webhook.test', { webhook_id: id, message: 'A test event from goalkeeper.' }, now, { onlyWebhookId: id }))
    return { message_id: r.message_id }
  }

  /** The attempts log, newest first. */
  async attempts(agentId: string, id: string, opts: { limit: number; cursor?: string | undefined }): Promise<Page<AttemptView>> {
    await this.row(agentId, id)
    return pageOf((await this.repo.attempts(agentId, id, opts.limit, opts.cursor)).map(attemptView), opts.limit)
  }

  /** Manual redelivery: the message goes out again now (one more attempt, same `webhook-id`). */
  async retry(agentId: string, id: string, messageId: string): Promise<{ message_id: string; status: 'queued' }> {
    await this.row(agentId, id)
    const now = this.clock()
    if ((await this.repo.delivery(agentId, id, messageId)) === undefined) throw notFound('delivery', messageId)
    await this.repo.requeue(agentId, id, messageId, now)
    return { message_id: messageId, status: 'queued' }
  }
}
