/**
 * Every SQL statement over `agents` and `api_keys`. Keys are stored as the hex SHA-256 of the key.
 * Row types come from the Drizzle schema (src/db/schema/agents.ts). The SQL is the same on both dialects.
 */
import type { InferSelectModel } from 'drizzle-orm'
import type { SqlDatabase } from '../db/database.js'
import type { agents, apiKeys } from '../db/schema/index.js'

type Db = { dbColumnNames: true }
export type AgentRow = InferSelectModel<typeof agents, Db>
export type ApiKeyRow = InferSelectModel<typeof apiKeys, Db>

const INSERT_AGENT = 'INSERT INTO agents (id, name, created_at) VALUES (@id, @name, @created_at)'
const INSERT_KEY = 'INSERT INTO api_keys (id, agent_id, key_hash, created_at) VALUES (@id, @agent_id, @key_hash, @created_at)'

export class AgentRepository {
  private readonly db: SqlDatabase

  constructor(db: SqlDatabase) {
    this.db = db
  }

  /** A new agent with its first key, together or not at all (a savepoint inside the caller's transaction). */
  insert(agent: AgentRow, key: ApiKeyRow): Promise<void> {
    return this.db.transaction(async () => {
      await this.db.run(INSERT_AGENT, agent)
      await this.db.run(INSERT_KEY, key)
    })
  }

  async insertKey(key: ApiKeyRow): Promise<void> {
    await this.db.run(INSERT_KEY, key)
  }

  /** One page in id (= creation) order plus one row, to know whether more follow. */
  list(limit: number, cursor = ''): Promise<AgentRow[]> {
    return this.db.all('SELECT id, name, created_at FROM agents WHERE id > ? ORDER BY id LIMIT ?', [cursor, limit + 1])
  }

  async count(): Promise<number> {
    return (await this.db.get<{ n: number }>('SELECT count(*) AS n FROM agents'))?.n ?? 0
  }

  async exists(id: string): Promise<boolean> {
    return (await this.db.get('SELECT id FROM agents WHERE id = ?', [id])) !== undefined
  }

  /** Every table referencing agents.id cascades. */
  async remove(id: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM agents WHERE id = ?', [id])) > 0
  }

  async removeKey(agentId: string, keyId: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM api_keys WHERE id = ? AND agent_id = ?', [keyId, agentId])) > 0
  }

  byKeyHash(hex: string): Promise<Pick<ApiKeyRow, 'agent_id' | 'key_hash'> | undefined> {
    return this.db.get('SELECT agent_id, key_hash FROM api_keys WHERE key_hash = ?', [hex])
  }
}
