/**
 * Full-text search over an agent's reminders and the context-trigger match, on either dialect.
 * SQLite: FTS5 indexes `reminder_search_fts` and `reminder_context_fts`, porter-stemmed, case- and
 * diacritic-insensitive. PostgreSQL: the generated tsvector columns `search_doc` and
 * `context_doc` (English stemming, GIN-indexed; migrations/pg).
 *
 * User text never reaches query syntax: it is cut into word tokens and each is quoted, so input
 * such as `"`, `NEAR(`, `*` or `-` cannot raise a query error; text with no words matches nothing.
 */
import type { SqlDatabase } from '../db/database.js'
import { STOP_WORDS } from '../engine/similarity/text.js'
import { fieldPath, unprocessable } from '../errors.js'
import { rowColumns, type ReminderRepository } from './repository.js'
import { toReminder, wordTokens, type Reminder, type ReminderRow } from './model.js'

const MAX_QUERY_TERMS = 32
const MAX_MESSAGE_TERMS = 64
const MAX_SEARCH_LIMIT = 100

/**
 * Quoted, de-duplicated word tokens joined by `op`; null when the text has no words. English
 * stop words are left out unless the text has nothing else: they carry no relevance (BM25 gives
 * a term in half the rows no weight) and would make every query touch most of the index.
 * `dialect` 'postgres' writes the same query for `websearch_to_tsquery` (AND is its default).
 */
export function ftsQuery(text: string, op: 'OR' | 'AND', maxTerms = MAX_QUERY_TERMS, dialect: SqlDatabase['dialect'] = 'sqlite'): string | null {
  const all = [...new Set(wordTokens(text))]
  const content = all.filter((t) => !STOP_WORDS.has(t))
  const terms = (content.length > 0 ? content : all).slice(0, maxTerms)
  if (terms.length === 0) return null
  const join = dialect === 'sqlite' ? ` ${op} ` : op === 'OR' ? ' or ' : ' '
  return terms.map((t) => `"${t}"`).join(join)
}

/** Column weights: a hit in the title counts most, then tags and pattern, then the body. */
export const SEARCH_WEIGHTS = { title: 10, body: 1, tags: 4 } as const
/** SQLite's bm25() fixes k1 = 1.2 and b = 0.75; only b enters the weights below. */
const B = 0.75
/** Indexed columns of `reminder_search_fts` (title, body, tags, pad): each has length -1 to bm25. */
const SEARCH_COLUMNS = 4

/**
 * Column weights for bm25() on `reminder_search_fts` that make its score exactly BM25 with
 * b = 0 under the weights above. With columnsize=0 bm25 takes the row length D as -4 (one -1
 * per column), so its saturation constant is K = k1 (1 - b - 4b / avgdl) for every row instead
 * of k1; a term's part is idf (k1 + 1) w f / (w f + K), and scaling every weight w by K / k1
 * turns that into idf (k1 + 1) f / (f + k1). The 16 pad tokens a row keep avgdl above 12, so K
 * stays positive. Null when the index is empty.
 */
export function searchWeights(totals: { rows: number; tokens: number }): [number, number, number] | null {
  if (totals.rows <= 0 || totals.tokens <= 0) return null
  const scale = 1 - B - (B * SEARCH_COLUMNS) / (totals.tokens / totals.rows)
  if (!(scale > 0)) return null
  return [SEARCH_WEIGHTS.title * scale, SEARCH_WEIGHTS.body * scale, SEARCH_WEIGHTS.tags * scale]
}

/**
 * Rows and total tokens from an FTS5 "averages" record (`%_data` id 1): SQLite varints, the row
 * count then one token total per column. This is what bm25 divides for avgdl.
 */
export function decodeAverages(block: Uint8Array): { rows: number; tokens: number } {
  const values: number[] = []
  let i = 0
  while (i < block.length) {
    let v = 0
    let n = 0
    for (;;) {
      const byte = block[i++] as number
      // The ninth byte of a SQLite varint carries 8 bits, the others 7 and a continuation bit.
      if (n === 8) {
        v = v * 256 + byte
        break
      }
      v = v * 128 + (byte & 0x7f)
      n++
      if ((byte & 0x80) === 0 || i >= block.length) break
    }
    values.push(v)
  }
  const [rows = 0, ...columns] = values
  return { rows, tokens: columns.reduce((a, b) => a + b, 0) }
}

/**
 * BM25 (negated FTS5 rank, > 0, larger is better) mapped to (0, 1) by r / (1 + r): monotone, so
 * a better match always scores higher, and none is flattened to 1.0.
 */
export function bm25Score(rank: number): number {
  const r = Math.max(0, -rank)
  return r / (1 + r)
}

/**
 * PostgreSQL: ts_rank over `search_doc` with the column weights of SEARCH_WEIGHTS (labels D, C, B,
 * A = -, tags and pattern, body, title), normalization 32 mapping it to rank / (rank + 1).
 * Ordering differs from SQLite's BM25: ts_rank counts how often the query's words occur in the
 * row, weighted by column, but has no inverse document frequency (a word in every reminder counts
 * as much as a rare one) and no length saturation; ties go oldest first on both. English stop
 * words are dropped from query and documents here, so a query of stop words only matches nothing.
 */
const PG_RANK = `ts_rank('{0, ${SEARCH_WEIGHTS.tags / 10}, ${SEARCH_WEIGHTS.body / 10}, ${SEARCH_WEIGHTS.title / 10}}'::float4[], r.search_doc, q, 32)`

/** The texts of one dialect; the optional ones are SQLite's alone. */
interface Statements {
  search: string
  context: string
  messageHas: string
  averages?: string
  createMessage?: string
  clearMessage?: string
  putMessage?: string
}

function statements(dialect: SqlDatabase['dialect']): Statements {
  const cols = rowColumns(dialect, 'r')
  const liveContext = "r.trigger_type = 'context' AND (r.status = 'pending' OR (r.status = 'snoozed' AND r.snooze_until <= @now))"
  if (dialect === 'postgres') {
    return {
      search: `SELECT ${cols}, ${PG_RANK} AS score FROM reminders r, websearch_to_tsquery('english', @match) q
        WHERE r.agent_id = @agent AND r.search_doc @@ q ORDER BY score DESC, r.id LIMIT @limit`,
      // The turn fires what this returns: locked, as the due query locks its rows.
      context: `SELECT ${cols} FROM reminders r WHERE r.agent_id = @agent AND ${liveContext}
        AND r.context_doc @@ websearch_to_tsquery('english', @match) FOR UPDATE`,
      // Which of the patterns (AND queries) every word of the message satisfies, stemming included.
      messageHas: `SELECT p AS query FROM unnest(@patterns::text[]) p
        WHERE to_tsvector('english', @message) @@ websearch_to_tsquery('english', p)`,
    }
  }
  return {
    // The agent's rowid range is applied inside FTS5, and only the top `limit` hits are joined
    // (CROSS JOIN pins that order: otherwise the planner may walk all the agent's rows instead).
    // Column weights are bound per query (searchWeights); the pad column weighs nothing.
    search: `SELECT ${cols}, t.k AS k FROM (
        SELECT rowid AS d, bm25(reminder_search_fts, @w0, @w1, @w2, 0.0) AS k FROM reminder_search_fts
        WHERE reminder_search_fts MATCH @match AND rowid >= @lo AND rowid < @hi ORDER BY k, rowid LIMIT @limit
      ) t CROSS JOIN reminders r ON r.doc_id = t.d WHERE r.agent_id = @agent ORDER BY t.k, t.d`,
    // bm25's average row length comes from the index's averages record; reading it costs ~2 µs.
    averages: 'SELECT block FROM reminder_search_fts_data WHERE id = 1',
    // Context candidates come from `reminder_context_fts` (migrations/0000_init.sql): only context
    // reminders' tags and pattern, so message words common in titles and bodies cost nothing.
    context: `SELECT ${cols} FROM reminder_context_fts c JOIN reminders r ON r.doc_id = c.rowid
      WHERE reminder_context_fts MATCH @match AND c.rowid >= @lo AND c.rowid < @hi AND r.agent_id = @agent AND ${liveContext}`,
    // The user message goes into a one-row temp FTS table with the same tokenizer, so "is every
    // pattern term in the message" is answered by FTS5 itself, stemming included. Created on
    // each use (a no-op once there): a rolled-back transaction may have taken it away again.
    createMessage: `CREATE VIRTUAL TABLE IF NOT EXISTS temp.turn_message
      USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')`,
    clearMessage: 'DELETE FROM temp.turn_message',
    putMessage: 'INSERT INTO temp.turn_message (text) VALUES (?)',
    messageHas: 'SELECT 1 AS one FROM temp.turn_message WHERE turn_message MATCH ?',
  }
}

export class ReminderSearch {
  private readonly repo: ReminderRepository
  private readonly db: SqlDatabase
  private readonly pg: boolean
  private readonly s: ReturnType<typeof statements>

  constructor(repo: ReminderRepository) {
    this.repo = repo
    this.db = repo.db
    this.pg = this.db.dialect === 'postgres'
    this.s = statements(this.db.dialect)
  }

  /** Best first; scores strictly decrease with relevance (ties share a score, oldest first). */
  async search(agentId: string, q: string, limit = 20): Promise<{ items: { reminder: Reminder; score: number }[] }> {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
      throw unprocessable(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}.`, [{ path: fieldPath('querystring', 'limit'), message: 'out of range' }])
    }
    // OR: a reminder that shares more (and rarer) words with the query ranks higher.
    const match = ftsQuery(q, 'OR', MAX_QUERY_TERMS, this.db.dialect)
    if (match === null) return { items: [] }
    if (this.pg) {
      const rows = await this.db.all<ReminderRow & { score: number }>(this.s.search, { match, agent: agentId, limit })
      return { items: rows.map((r) => ({ reminder: toReminder(r), score: r.score })) }
    }
    const range = await this.repo.docRange(agentId)
    if (range === null) return { items: [] }
    const averages = await this.db.get<{ block: Uint8Array }>(this.s.averages!)
    const weights = averages === undefined ? null : searchWeights(decodeAverages(averages.block))
    if (weights === null) return { items: [] }
    const [w0, w1, w2] = weights
    const rows = await this.db.all<ReminderRow & { k: number }>(this.s.search, { w0, w1, w2, match, lo: range.lo, hi: range.hi, limit, agent: agentId })
    return { items: rows.map((r) => ({ reminder: toReminder(r), score: bm25Score(r.k) })) }
  }

  /**
   * Context reminders the message triggers. Rule: a live context reminder (pending, or snoozed
   * with the snooze over) matches when **every** word of its pattern occurs in the message, or
   * every word of any one of its context tags does (stemmed: "deploying" matches "deploy").
   * Candidates come from the index (a pattern or tag sharing any word with the message); the
   * all-words check then runs against the message alone. On PostgreSQL the candidates are
   * locked until the caller's transaction ends (the turn fires them).
   */
  async contextMatches(agentId: string, message: string, nowMs: number): Promise<ReminderRow[]> {
    const dialect = this.db.dialect
    const any = ftsQuery(message, 'OR', MAX_MESSAGE_TERMS, dialect)
    if (any === null) return []
    let candidates: ReminderRow[]
    if (this.pg) {
      candidates = await this.db.all<ReminderRow>(this.s.context, { match: any, agent: agentId, now: nowMs })
    } else {
      const range = await this.repo.docRange(agentId)
      if (range === null) return []
      candidates = await this.db.all<ReminderRow>(this.s.context, { match: any, lo: range.lo, hi: range.hi, agent: agentId, now: nowMs })
    }
    if (candidates.length === 0) return []
    const queries = new Map<ReminderRow, string[]>()
    for (const row of candidates) {
      const phrases = [row.trigger_pattern ?? '', ...(JSON.parse(row.context_tags) as string[])]
      queries.set(
        row,
        phrases.flatMap((p) => ftsQuery(p, 'AND', MAX_QUERY_TERMS, dialect) ?? []),
      )
    }
    const matched = await this.messageMatches(message, [...new Set([...queries.values()].flat())])
    return candidates.filter((row) => queries.get(row)!.some((q) => matched.has(q)))
  }

  /** The AND queries among `patterns` that the message satisfies. */
  private async messageMatches(message: string, patterns: string[]): Promise<Set<string>> {
    if (patterns.length === 0) return new Set()
    if (this.pg) {
      const rows = await this.db.all<{ query: string }>(this.s.messageHas, { patterns, message })
      return new Set(rows.map((r) => r.query))
    }
    await this.db.run(this.s.createMessage!)
    await this.db.run(this.s.clearMessage!)
    await this.db.run(this.s.putMessage!, [message])
    try {
      const out = new Set<string>()
      for (const p of patterns) if ((await this.db.get(this.s.messageHas, [p])) !== undefined) out.add(p)
      return out
    } finally {
      await this.db.run(this.s.clearMessage!)
    }
  }
}
