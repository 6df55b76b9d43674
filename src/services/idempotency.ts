import { createHash } from 'node:crypto'
import { and, eq, lt } from 'drizzle-orm'
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

/** Stores first responses of create calls for 24 h (Stripe-style `Idempotency-Key`). */
export class IdempotencyService {
  #sinceLastPrune = 0

  private readonly handle: DbHandle
  private readonly clock: Clock

  constructor(handle: DbHandle, clock: Clock) {
    this.handle = handle
    this.clock = clock
  }

  /** Runs `fn` in one transaction (a savepoint inside an open one): a create and its record commit together. */
  transaction<T>(fn: () => T): T {
    return this.handle.sqlite.transaction(fn)()
  }

  lookup(req: IdempotencyRequest): IdempotencyLookup {
    const row = this.handle.db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.scope, req.scope), eq(idempotencyKeys.key, req.key)))
      .get()
    if (!row || row.createdAt <= this.clock() - IDEMPOTENCY_TTL_MS) return { kind: 'new' }
    if (row.method !== req.method || row.path !== req.path || row.bodyHash !== req.bodyHash) return { kind: 'mismatch' }
    return { kind: 'replay', status: row.status, body: row.responseBody }
  }

  save(req: IdempotencyRequest, status: number, responseBody: string): void {
    const now = this.clock()
    const values = { ...req, status, responseBody, createdAt: now }
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
