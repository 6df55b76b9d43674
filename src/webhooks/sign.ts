import { createHmac, randomBytes } from 'node:crypto'

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000

/** A Standard Webhooks symmetric secret: `whsec_` + base64 of 32 random bytes (spec minimum 24). */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64')
}

/** One `v1,<base64 HMAC-SHA256("{id}.{timestamp}.{body}")>` entry. */
function signV1(secret: string, msgId: string, timestampSec: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${msgId}.${timestampSec}.${body}`).digest('base64')
  return `v1,${mac}`
}

/** The `webhook-signature` header: one space-separated entry per secret (two during a rotation). */
export function signatureHeader(secrets: readonly string[], msgId: string, timestampSec: number, body: string): string {
  return secrets.map((s) => signV1(s, msgId, timestampSec, body)).join(' ')
}

/** The secrets that sign at `nowMs`: the current one, plus the previous one inside its overlap. */
export function activeSecrets(w: { secret: string; previousSecret: string | null; previousSecretExpiresAt: number | null }, nowMs: number): string[] {
  const out = [w.secret]
  if (w.previousSecret && w.previousSecretExpiresAt !== null && nowMs < w.previousSecretExpiresAt) {
    out.push(w.previousSecret)
  }
  return out
}
