import { idempotencyKey, unwrap, type Api } from '../call.js'
import type { Query, RequestBody, ResponseBody, Webhook, WebhookCreated } from '../types.js'
import { verifyWebhook } from '../webhook-verify.js'
import type { WriteOptions } from './sessions.js'

const path = (id: string) => ({ params: { path: { id } } })

/** Webhook endpoints, their delivery log, and the signature check for a receiver. */
export class Webhooks {
  private readonly api: Api
  constructor(api: Api) {
    this.api = api
  }

  /** Checks a delivery's Standard Webhooks signature and returns its event (see verifyWebhook). */
  readonly verify = verifyWebhook

  /** The answer carries `secret` (shown here and on rotation only). */
  create(body: RequestBody<'createWebhook'>, options: WriteOptions = {}): Promise<WebhookCreated> {
    const headers = { 'idempotency-key': options.idempotencyKey ?? idempotencyKey() }
    return unwrap(this.api.POST('/v1/webhooks', { body, headers, signal: options.signal }))
  }

  list(query: Query<'listWebhooks'> = {}): Promise<ResponseBody<'listWebhooks'>> {
    return unwrap(this.api.GET('/v1/webhooks', { params: { query } }))
  }

  get(id: string): Promise<Webhook> {
    return unwrap(this.api.GET('/v1/webhooks/{id}', path(id)))
  }

  update(id: string, body: RequestBody<'updateWebhook'>): Promise<ResponseBody<'updateWebhook'>> {
    return unwrap(this.api.PATCH('/v1/webhooks/{id}', { ...path(id), body }))
  }

  async delete(id: string): Promise<void> {
    await unwrap(this.api.DELETE('/v1/webhooks/{id}', path(id)))
  }

  rotateSecret(id: string): Promise<ResponseBody<'rotateWebhookSecret'>> {
    return unwrap(this.api.POST('/v1/webhooks/{id}/rotate-secret', path(id)))
  }

  /** Sends a `webhook.test` event (202). */
  async test(id: string): Promise<void> {
    await unwrap(this.api.POST('/v1/webhooks/{id}/test', path(id)))
  }

  deliveries(id: string, query: Query<'listWebhookDeliveries'> = {}): Promise<ResponseBody<'listWebhookDeliveries'>> {
    return unwrap(this.api.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id }, query } }))
  }

  /** Queues another attempt of a message (202). */
  async retryDelivery(id: string, messageId: string): Promise<void> {
    await unwrap(this.api.POST('/v1/webhooks/{id}/deliveries/{message_id}/retry', { params: { path: { id, message_id: messageId } } }))
  }
}
