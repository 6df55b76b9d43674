import { vi } from 'vitest'
import { Webhook } from 'standardwebhooks'
import type { Received } from './receiver.js'

/**
 * Verifies a received request with the `standardwebhooks` package. Its timestamp tolerance reads
 * the wall clock, and these tests drive time with an injected clock, so the wall clock is pinned
 * to the attempt's own timestamp for the call (tests assert the timestamps separately).
 */
export function verify(secret: string, rec: Received): unknown {
  const spy = vi.spyOn(Date, 'now').mockReturnValue(Number(rec.headers['webhook-timestamp']) * 1000)
  try {
    return new Webhook(secret).verify(rec.body, {
      'webhook-id': String(rec.headers['webhook-id']),
      'webhook-timestamp': String(rec.headers['webhook-timestamp']),
      'webhook-signature': String(rec.headers['webhook-signature']),
    })
  } finally {
    spy.mockRestore()
  }
}
