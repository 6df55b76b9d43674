import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { and, eq, lt, notLike } from 'drizzle-orm'
import type { DbHandle } from '../db/client.js'
import { idempotencyKeys } from '../db/schema/index.js'
import type { Clock } from '../engine/clock.js'

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

export interface IdempotencyRequest {
  /** Agent id, or 'admin' for admin calls. */
  scope: string
  agentId: string | null
  key: string
  method: string
  path: string
  bodyHash: string
}

export type IdempotencyLookup =
  | { kind: 'new' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'mismatch' }

/** Order-independent hash of a parsed JSON body, so `{a,b}` and `{b,a}` count as the same request. */
export function hashBody(body: unknown): string {
  return createHash('sha256').update(stableStringify(body ?? null)).digest('hex')
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
 * AES-256-GCM-encrypted under a second, separate digest of it, so reading the database alone
 * yields neither (short of guessing the client's key: clients should use random keys, as usual).
 */
const SEALED = 'v1.'

function digest(purpose: string, scope: string, key: string): Buffer {
  return createHash('sha256').update(`goalkeeper-idempotency\u0000${purpose}\u0000${scope}\u0000${key}`).digest()
}

/** The value of the `key` column for a client's key. */
export function lookupDigest(scope: string, key: string): string {
  return digest('lookup', scope, key).toString('hex')
}

export function seal(scope: string, key: string, body: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', digest('seal', scope, key), iv)
  const data = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()])
  return SEALED + Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64')
}

export function unseal(scope: string, key: string, sealed: string): string {
  const raw = Buffer.from(sealed.slice(SEALED.length), 'base64')
  const decipher = createDecipheriv('aes-256-gcm', digest('seal', scope, key), raw.subarray(0, 12))
  decipher.setAuthTag(raw.subarray(12, 28))
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
}

/** Stores first responses of create calls for 24 h (Stripe-style `Idempotency-Key`), sealed. */
export class IdempotencyService {
  #sinceLastPrune = 0
  #legacyChecked = false

  private readonly handle: DbHandle
  private readonly clock: Clock

  constructor(handle: DbHandle, clock: Clock) {
    this.handle = handle
    this.clock = clock
  }

  /** Records written before sealing (plain key and body) are sealed in place, once, on first use. */
  private sealLegacy(): void {
    if (this.#legacyChecked) return
    this.#legacyChecked = true
    const legacy = this.handle.db.select().from(idempotencyKeys).where(notLike(idempotencyKeys.responseBody, `${SEALED}%`)).all()
    if (legacy.length === 0) return
    this.transaction(() => {
      for (const row of legacy) {
        this.handle.db
          .update(idempotencyKeys)
          .set({ key: lookupDigest(row.scope, row.key), responseBody: seal(row.scope, row.key, row.responseBody) })
          .where(and(eq(idempotencyKeys.scope, row.scope), eq(idempotencyKeys.key, row.key)))
          .run()
      }
    })
  }

  /** Runs `fn` in one transaction (a savepoint inside an open one): a create and its record commit together. */
  transaction<T>(fn: () => T): T {
    return this.handle.sqlite.transaction(fn)()
  }

  lookup(req: IdempotencyRequest): IdempotencyLookup {
    this.sealLegacy()
    const row = this.handle.db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.scope, req.scope), eq(idempotencyKeys.key, lookupDigest(req.scope, req.key))))
      .get()
    if (!row || row.createdAt <= this.clock() - IDEMPOTENCY_TTL_MS) return { kind: 'new' }
    if (row.method !== req.method || row.path !== req.path || row.bodyHash !== req.bodyHash) return { kind: 'mismatch' }
    return { kind: 'replay', status: row.status, body: unseal(req.scope, req.key, row.responseBody) }
  }

  save(req: IdempotencyRequest, status: number, responseBody: string): void {
    this.sealLegacy()
    const now = this.clock()
    const values = { ...req, key: lookupDigest(req.scope, req.key), status, responseBody: seal(req.scope, req.key, responseBody), createdAt: now }
    this.handle.db
      .insert(idempotencyKeys)
      .values(values)
      .onConflictDoUpdate({ target: [idempotencyKeys.scope, idempotencyKeys.key], set: values })
      .run()
    // Prune on every 100th save: an indexed range delete, so it stays cheap as the table grows.
    if (++this.#sinceLastPrune >= 100) this.prune()
  }

  prune(): number {
    this.#sinceLastPrune = 0
    return this.handle.db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, this.clock() - IDEMPOTENCY_TTL_MS)).run().changes
  }
}
