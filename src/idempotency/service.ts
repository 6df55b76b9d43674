import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto'
import type { SqlDatabase } from '../db/database.js'
import type { Clock } from '../engine/clock.js'
import { transientConflict } from '../errors.js'
import { IdempotencyRepository, type IdempotencyRow } from './repository.js'

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

/** A record created before this instant has expired; one created at it or later is live (lookup, claim and prune agree). */
const expiredBefore = (now: number): number => now - IDEMPOTENCY_TTL_MS

export interface IdempotencyRequest {
  /** Agent id, or 'admin' for admin calls. */
  scope: string
  agentId: string | null
  key: string
  method: string
  path: string
  bodyHash: string
}

/** Whether two requests under one key are the same call (method, path and body), so one may replay the other. */
type Call = Pick<IdempotencyRequest, 'method' | 'path' | 'bodyHash'>
export const sameRequest = (a: Call, b: Call): boolean => a.method === b.method && a.path === b.path && a.bodyHash === b.bodyHash

export type IdempotencyLookup = { kind: 'new' } | { kind: 'replay'; status: number; body: string } | { kind: 'mismatch' }

/** Order-independent hash of a parsed JSON body, so `{a,b}` and `{b,a}` count as the same request. */
export function hashBody(body: unknown): string {
  return createHash('sha256')
    .update(stableStringify(body ?? null))
    .digest('hex')
}

function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`
  if (v && typeof v === 'object') {
    const entries = Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify((v as Record<string, unknown>)[k])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

/**
 * Records are sealed: a stored response may hold a secret (a created API key, a webhook's signing
 * secret), and the point of hashing keys in `api_keys` is lost if the same key sits readable in
 * this table. The `key` column holds a digest of the client's key, and the response is
 * AES-256-GCM-encrypted under a second, separate digest of it. With a server secret
 * (GOALKEEPER_IDEMPOTENCY_SECRET) both digests are HMACs under it, so the database alone yields
 * nothing; without one they are plain SHA-256, and a guessable client key could be found by trying
 * candidates against the `key` column.
 */
const SEALED = 'v1.'

export class Sealer {
  private readonly secret: string | undefined

  constructor(secret?: string) {
    this.secret = secret
  }

  private digest(purpose: string, scope: string, key: string): Buffer {
    const message = `goalkeeper-idempotency\u0000${purpose}\u0000${scope}\u0000${key}`
    return this.secret === undefined ? createHash('sha256').update(message).digest() : createHmac('sha256', this.secret).update(message).digest()
  }

  /** The value of the `key` column for a client's key. */
  lookupDigest(scope: string, key: string): string {
    return this.digest('lookup', scope, key).toString('hex')
  }

  seal(scope: string, key: string, body: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.digest('seal', scope, key), iv)
    const data = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()])
    return SEALED + Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64')
  }

  unseal(scope: string, key: string, sealed: string): string {
    const raw = Buffer.from(sealed.slice(SEALED.length), 'base64')
    const decipher = createDecipheriv('aes-256-gcm', this.digest('seal', scope, key), raw.subarray(0, 12))
    decipher.setAuthTag(raw.subarray(12, 28))
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
  }
}

/** Stores first responses of create calls for 24 h (Stripe-style `Idempotency-Key`), sealed. */
export class IdempotencyService {
  #sinceLastPrune = 0

  private readonly repo: IdempotencyRepository
  private readonly clock: Clock
  private readonly sealer: Sealer

  constructor(db: SqlDatabase, clock: Clock, secret?: string) {
    this.repo = new IdempotencyRepository(db)
    this.clock = clock
    this.sealer = new Sealer(secret)
  }

  private async find(scope: string, key: string): Promise<{ row: IdempotencyRow; body: () => string } | undefined> {
    const row = await this.repo.find(scope, this.sealer.lookupDigest(scope, key))
    return row === undefined ? undefined : { row, body: () => this.sealer.unseal(scope, key, row.response_body) }
  }

  async lookup(req: IdempotencyRequest): Promise<IdempotencyLookup> {
    const found = await this.find(req.scope, req.key)
    if (found === undefined || found.row.created_at < expiredBefore(this.clock())) return { kind: 'new' }
    const { row } = found
    if (!sameRequest({ method: row.method, path: row.path, bodyHash: row.body_hash }, req)) return { kind: 'mismatch' }
    return { kind: 'replay', status: row.status, body: found.body() }
  }

  /**
   * Stores the response in the caller's transaction. A live record of the same key stored
   * meanwhile (the same key sent to another replica at the same moment) makes this a 409, which
   * rolls back the write it would have answered for: one write per key, whatever the replica.
   */
  async save(req: IdempotencyRequest, status: number, responseBody: string): Promise<void> {
    const now = this.clock()
    const stored = await this.repo.claim(
      {
        scope: req.scope,
        key: this.sealer.lookupDigest(req.scope, req.key),
        agent_id: req.agentId,
        method: req.method,
        path: req.path,
        body_hash: req.bodyHash,
        status,
        response_body: this.sealer.seal(req.scope, req.key, responseBody),
        created_at: now,
      },
      expiredBefore(now),
    )
    if (!stored) throw transientConflict('A request with this Idempotency-Key was completed meanwhile; send it again to get its response.')
    // Prune on every 100th save.
    if (++this.#sinceLastPrune >= 100) await this.prune()
  }

  prune(): Promise<number> {
    this.#sinceLastPrune = 0
    return this.repo.deleteOlderThan(expiredBefore(this.clock()))
  }
}
