/**
 * Every SQL statement over `agents` and `api_keys`. Keys are stored as the hex SHA-256 of the key.
 * Row types come from the Drizzle schema (src/db/schema/agents.ts).
 */
import type Database from 'better-sqlite3'
import type { InferSelectModel } from 'drizzle-orm'
import { preparer, type Stmt } from '../db/lazy-statement.js'
import type { agents, apiKeys } from '../db/schema/index.js'

type Db = { dbColumnNames: true }
export type AgentRow = InferSelectModel<typeof agents, Db>
export type ApiKeyRow = InferSelectModel<typeof apiKeys, Db>

export class AgentRepository {
  private readonly insertAgentRow: Stmt<[AgentRow]>
  private readonly insertKeyRow: Stmt<[ApiKeyRow]>
  private readonly page: Stmt<[string, number], AgentRow>
  private readonly countRows: Stmt<[], { n: number }>
  private readonly existsRow: Stmt<[string], { id: string }>
  private readonly removeRow: Stmt<[string]>
  private readonly removeKeyRow: Stmt<[string, string]>
  private readonly byHashRow: Stmt<[string], Pick<ApiKeyRow, 'agent_id' | 'key_hash'>>
  private readonly insertBoth: (agent: AgentRow, key: ApiKeyRow) => void

  constructor(sqlite: Database.Database) {
    const prepare = preparer(sqlite)
    this.insertAgentRow = prepare('INSERT INTO agents (id, name, created_at) VALUES (@id, @name, @created_at)')
    this.insertKeyRow = prepare('INSERT INTO api_keys (id, agent_id, key_hash, created_at) VALUES (@id, @agent_id, @key_hash, @created_at)')
    this.page = prepare('SELECT id, name, created_at FROM agents WHERE id > ? ORDER BY id LIMIT ?')
    this.countRows = prepare('SELECT count(*) AS n FROM agents')
    this.existsRow = prepare('SELECT id FROM agents WHERE id = ?')
    // Every table referencing agents.id cascades.
    this.removeRow = prepare('DELETE FROM agents WHERE id = ?')
    this.removeKeyRow = prepare('DELETE FROM api_keys WHERE id = ? AND agent_id = ?')
    this.byHashRow = prepare('SELECT agent_id, key_hash FROM api_keys WHERE key_hash = ?')
    // A savepoint inside the caller's unit of work, a transaction of its own outside one.
    this.insertBoth = sqlite.transaction((agent: AgentRow, key: ApiKeyRow) => {
      this.insertAgentRow.run(agent)
      this.insertKeyRow.run(key)
    })
  }

  /** A new agent with its first key, together or not at all. */
  insert(agent: AgentRow, key: ApiKeyRow): void {
    this.insertBoth(agent, key)
  }

  insertKey(key: ApiKeyRow): void {
    this.insertKeyRow.run(key)
  }

  /** One page in id (= creation) order plus one row, to know whether more follow. */
  list(limit: number, cursor = ''): AgentRow[] {
    return this.page.all(cursor, limit + 1)
  }

  count(): number {
    return this.countRows.get()?.n ?? 0
  }

  exists(id: string): boolean {
    return this.existsRow.get(id) !== undefined
  }

  remove(id: string): boolean {
    return this.removeRow.run(id).changes > 0
  }

  removeKey(agentId: string, keyId: string): boolean {
    return this.removeKeyRow.run(keyId, agentId).changes > 0
  }

  byKeyHash(hex: string): Pick<ApiKeyRow, 'agent_id' | 'key_hash'> | undefined {
    return this.byHashRow.get(hex)
  }
}
