import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import type { Reminder } from './types.js'

export { WebhookVerificationError }

/** A delivery's body: `{ type, timestamp, data }`. */
export type WebhookEvent =
  | { type: 'reminder.triggered'; timestamp: string; data: { reminder: Reminder; scheduled_for: string; late: boolean } }
  | {
      type: 'session.drift_detected' | 'session.loop_detected' | 'session.stalled'
      timestamp: string
      data: { session_id: string } & Record<string, unknown>
    }
  | { type: 'webhook.test'; timestamp: string; data: Record<string, unknown> }

type HeaderSource = Headers | Record<string, string | string[] | undefined>

/**
 * Verifies a delivery with its endpoint's `whsec_…` secret: the `webhook-signature` over
 * `{id}.{timestamp}.{body}`, and a timestamp within 5 minutes (replays are refused). Pass the
 * raw body exactly as received. Throws WebhookVerificationError when it does not check out.
 */
export function verifyWebhook(secret: string, body: string | Buffer, headers: HeaderSource): WebhookEvent {
  const get = (name: string): string => {
    const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()])
    return (Array.isArray(value) ? value[0] : value) ?? ''
  }
  const payload = typeof body === 'string' ? body : body.toString('utf8')
  return new Webhook(secret).verify(payload, {
    'webhook-id': get('webhook-id'),
    'webhook-timestamp': get('webhook-timestamp'),
    'webhook-signature': get('webhook-signature'),
  }) as WebhookEvent
}
