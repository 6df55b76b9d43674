import { createHash, hash as oneShotHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { and, asc, count, eq, gt } from 'drizzle-orm'
import { LRUCache } from 'lru-cache'
import type { Statement } from 'better-sqlite3'
import type { DbHandle } from '../db/client.js'
import { agents, apiKeys } from '../db/schema/index.js'
import { isoAt, type Clock } from '../engine/clock.js'
import { notFound } from '../errors.js'
import { newId } from '../ids.js'
import { pageOf, type Page } from '../pagination.js'

export interface Agent {
  id: string
  name: string
  created_at: string
}
export interface CreatedAgent extends Agent {
  api_key: string
}
export interface CreatedKey {
  id: string
  api_key: string
  created_at: string
}

const KEY_PREFIX = 'gk_'
/** Authenticated key hashes kept in memory (most recently used first). */
const AUTH_CACHE_MAX = 10_000
/**
 * How long a cached key stays trusted without a database look-up. Revocations through this
 * process clear the cache at once; this bounds how long another process's revocation (a second
 * instance, a manual DELETE) can go unseen.
 */
export const AUTH_CACHE_TTL_MS = 30_000

/** `gk_` + 32 random bytes (base64url): high entropy, so a plain SHA-256 is a safe stored form. */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url')
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key).digest()
}

/** Agents (tenants) and their API keys. */
export class AgentsService {
  // Prepared lazily: the service is built before /readyz may find an unmigrated database.
  #byHash: Statement<[string], { agent_id: string; key_hash: string }> | undefined
  /** Hex SHA-256 of a valid key → its agent: spares every request a SELECT. Hits only, never misses. */
  readonly #authCache = new LRUCache<string, string>({ max: AUTH_CACHE_MAX, ttl: AUTH_CACHE_TTL_MS })

  private readonly handle: DbHandle
  private readonly clock: Clock
  /** Told after an agent and its data are deleted (caches of that data let go of it). */
  private readonly onDelete: ((agentId: string) => void) | undefined

  constructor(handle: DbHandle, clock: Clock, onDelete?: (agentId: string) => void) {
    this.handle = handle
    this.clock = clock
    this.onDelete = onDelete
  }

  create(name: string): CreatedAgent {
    const now = this.clock()
    const id = newId('agt', now)
    const apiKey = generateApiKey()
    this.handle.db.transaction((tx) => {
      tx.insert(agents).values({ id, name, createdAt: now }).run()
      tx.insert(apiKeys).values({ id: newId('key', now), agentId: id, keyHash: hashApiKey(apiKey).toString('hex'), createdAt: now }).run()
    })
    return { id, name, api_key: apiKey, created_at: isoAt(now) }
  }

  list(limit: number, cursor?: string): Page<Agent> {
    const rows = this.handle.db
      .select()
      .from(agents)
      .where(cursor ? gt(agents.id, cursor) : undefined)
      .orderBy(asc(agents.id))
      .limit(limit + 1)
      .all()
    return pageOf(rows.map((r) => ({ id: r.id, name: r.name, created_at: isoAt(r.createdAt) })), limit)
  }

  count(): number {
    return this.handle.db.select({ n: count() }).from(agents).get()?.n ?? 0
  }

  /** Removes the agent; every table referencing agents.id cascades. */
  delete(agentId: string): void {
    const res = this.handle.db.delete(agents).where(eq(agents.id, agentId)).run()
    this.#authCache.clear()
    if (res.changes === 0) throw notFound('agent', agentId)
    this.onDelete?.(agentId)
  }

  createKey(agentId: string): CreatedKey {
    const now = this.clock()
    const exists = this.handle.db.select({ id: agents.id }).from(agents).where(eq(agents.id, agentId)).get()
    if (!exists) throw notFound('agent', agentId)
    const apiKey = generateApiKey()
    const id = newId('key', now)
    this.handle.db.insert(apiKeys).values({ id, agentId, keyHash: hashApiKey(apiKey).toString('hex'), createdAt: now }).run()
    return { id, api_key: apiKey, created_at: isoAt(now) }
  }

  deleteKey(agentId: string, keyId: string): void {
    const res = this.handle.db.delete(apiKeys).where(and(eq(apiKeys.id, keyId), eq(apiKeys.agentId, agentId))).run()
    this.#authCache.clear()
    if (res.changes === 0) throw notFound('key', keyId)
  }

  /** The agent an API key belongs to, or undefined. Looked up by hash, confirmed in constant time. */
  authenticate(apiKey: string): string | undefined {
    if (!apiKey.startsWith(KEY_PREFIX) || apiKey.length > 128) return undefined
    // The one-shot hash is about twice as fast as createHash().update().digest().
    const hex = oneShotHash('sha256', apiKey, 'hex')
    const cached = this.#authCache.get(hex)
    if (cached !== undefined) return cached
    this.#byHash ??= this.handle.sqlite.prepare('SELECT agent_id, key_hash FROM api_keys WHERE key_hash = ?')
    const row = this.#byHash.get(hex)
    if (!row) return undefined
    if (!timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(hex, 'hex'))) return undefined
    this.#authCache.set(hex, row.agent_id)
    return row.agent_id
  }
}
