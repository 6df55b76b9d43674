import type { Client } from 'openapi-fetch'
import { GoalkeeperError } from './errors.js'
import type { paths } from './generated/openapi.js'

/** The generated openapi-fetch client the resource groups call through. */
export type Api = Client<paths>

/** The body of a successful call, or the server's problem+json thrown as a GoalkeeperError. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call
  if (!response.ok) throw GoalkeeperError.fromResponse(response, error)
  return data as T
}

/** A fresh Idempotency-Key for a write that may be retried. */
export function idempotencyKey(): string {
  return globalThis.crypto.randomUUID()
}
