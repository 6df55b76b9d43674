import { createHash, hash as oneShotHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { SqlDatabase } from '../db/database.js'
import { isoAt, type Clock } from '../engine/clock.js'
import { notFound } from '../errors.js'
import { newId } from '../ids.js'
import { pageOf, type Page } from '../pagination.js'
import { AgentRepository } from './repository.js'

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
const AUTH_CACHE_TTL_MS = 30_000

/** `gk_` + 32 random bytes (base64url): high entropy, so a plain SHA-256 is a safe stored form. */
function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url')
}

function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key).digest()
}

/** Agents (tenants) and their API keys. */
export class AgentsService {
  /** Hex SHA-256 of a valid key → its agent: spares every request a SELECT. Hits only, never misses. */
  readonly #authCache = new LRUCache<string, string>({ max: AUTH_CACHE_MAX, ttl: AUTH_CACHE_TTL_MS })

  private readonly repo: AgentRepository
  private readonly clock: Clock
  /** Told after an agent and its data are deleted (caches of that data let go of it). */
  private readonly onDelete: ((agentId: string) => void) | undefined

  constructor(db: SqlDatabase, clock: Clock, onDelete?: (agentId: string) => void) {
    this.repo = new AgentRepository(db)
    this.clock = clock
    this.onDelete = onDelete
  }

  async create(name: string): Promise<CreatedAgent> {
    const now = this.clock()
    const id = newId('agt', now)
    const apiKey = generateApiKey()
    await this.repo.insert({ id, name, created_at: now }, { id: newId('key', now), agent_id: id, key_hash: hashApiKey(apiKey).toString('hex'), created_at: now })
    return { id, name, api_key: apiKey, created_at: isoAt(now) }
  }

  async list(limit: number, cursor?: string): Promise<Page<Agent>> {
    const rows = await this.repo.list(limit, cursor)
    return pageOf(
      rows.map((r) => ({ id: r.id, name: r.name, created_at: isoAt(r.created_at) })),
      limit,
    )
  }

  count(): Promise<number> {
    return this.repo.count()
  }

  /** Removes the agent with all its data. */
  async delete(agentId: string): Promise<void> {
    const removed = await this.repo.remove(agentId)
    this.#authCache.clear()
    if (!removed) throw notFound('agent', agentId)
    this.onDelete?.(agentId)
  }

  async createKey(agentId: string): Promise<CreatedKey> {
    const now = this.clock()
    if (!(await this.repo.exists(agentId))) throw notFound('agent', agentId)
    const apiKey = generateApiKey()
    const id = newId('key', now)
    await this.repo.insertKey({ id, agent_id: agentId, key_hash: hashApiKey(apiKey).toString('hex'), created_at: now })
    return { id, api_key: apiKey, created_at: isoAt(now) }
  }

  async deleteKey(agentId: string, keyId: string): Promise<void> {
    const removed = await this.repo.removeKey(agentId, keyId)
    this.#authCache.clear()
    if (!removed) throw notFound('key', keyId)
  }

  /** The agent of a key this process has recently confirmed, without touching the database (the hot path). */
  cachedAgent(apiKey: string): string | undefined {
    if (!apiKey.startsWith(KEY_PREFIX) || apiKey.length > 128) return undefined
    // The one-shot hash is about twice as fast as createHash().update().digest().
    return this.#authCache.get(oneShotHash('sha256', apiKey, 'hex'))
  }

  /** The agent an API key belongs to, or undefined. Looked up by hash, confirmed in constant time. */
  async authenticate(apiKey: string): Promise<string | undefined> {
    if (!apiKey.startsWith(KEY_PREFIX) || apiKey.length > 128) return undefined
    const hex = oneShotHash('sha256', apiKey, 'hex')
    const cached = this.#authCache.get(hex)
    if (cached !== undefined) return cached
    const row = await this.repo.byKeyHash(hex)
    if (!row) return undefined
    if (!timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(hex, 'hex'))) return undefined
    this.#authCache.set(hex, row.agent_id)
    return row.agent_id
  }
}
