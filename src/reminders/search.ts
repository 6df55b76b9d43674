/**
 * Full-text search over an agent's reminders (FTS5 index `reminder_search_fts`) and the
 * context-trigger match (`reminder_context_fts`); both porter-stemmed, case- and
 * diacritic-insensitive.
 *
 * User text never reaches FTS5 syntax: it is cut into word tokens and each is quoted, so input
 * such as `"`, `NEAR(`, `*` or `-` cannot raise a query error; text with no words matches nothing.
 */
import type Database from 'better-sqlite3'
import { lazyPrepare } from '../db/lazy-statement.js'
import { STOP_WORDS } from '../engine/text.js'
import { fieldPath, unprocessable } from '../errors.js'
import type { ReminderStore } from './repository.js'
import { rowFromArray, rowSelect, toReminder, wordTokens, type Reminder, type ReminderRow } from './model.js'

const MAX_QUERY_TERMS = 32
const MAX_MESSAGE_TERMS = 64
export const MAX_SEARCH_LIMIT = 100

/**
 * Quoted, de-duplicated word tokens joined by `op`; null when the text has no words. English
 * stop words are left out unless the text has nothing else: they carry no relevance (BM25 gives
 * a term in half the rows no weight) and would make every query touch most of the index.
 */
export function ftsQuery(text: string, op: 'OR' | 'AND', maxTerms = MAX_QUERY_TERMS): string | null {
  const all = [...new Set(wordTokens(text))]
  const content = all.filter((t) => !STOP_WORDS.has(t))
  const terms = (content.length > 0 ? content : all).slice(0, maxTerms)
  return terms.length === 0 ? null : terms.map((t) => `"${t}"`).join(` ${op} `)
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
      if (n === 8) { v = v * 256 + byte; break }
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
 * a better match always scores higher, and never flattened to 1.0 as in the original.
 */
export function bm25Score(rank: number): number {
  const r = Math.max(0, -rank)
  return r / (1 + r)
}

export class ReminderSearch {
  private readonly store: ReminderStore
  private readonly searchStmt: Database.Statement<[number, number, number, string, number, number, number, string], unknown[]>
  private readonly averagesStmt: Database.Statement<[], Buffer>
  private readonly contextStmt: Database.Statement<[string, number, number, string, number], unknown[]>
  private readonly clearMessage: Database.Statement
  private readonly putMessage: Database.Statement<[string]>
  private readonly messageHas: Database.Statement<[string], { one: number }>

  constructor(store: ReminderStore) {
    this.store = store
    const sqlite = store.sqlite
    // The agent's rowid range is applied inside FTS5, and only the top `limit` hits are joined
    // (CROSS JOIN pins that order: otherwise the planner may walk all the agent's rows instead).
    // Column weights are bound per query (searchWeights); the pad column weighs nothing.
    this.searchStmt = lazyPrepare(sqlite, `SELECT ${rowSelect('r')}, t.k FROM (
        SELECT rowid AS d, bm25(reminder_search_fts, ?, ?, ?, 0.0) AS k FROM reminder_search_fts
        WHERE reminder_search_fts MATCH ? AND rowid >= ? AND rowid < ? ORDER BY k, rowid LIMIT ?
      ) t CROSS JOIN reminders r ON r.doc_id = t.d WHERE r.agent_id = ? ORDER BY t.k, t.d`)
    // bm25's average row length comes from the index's averages record; reading it costs ~2 µs.
    this.averagesStmt = lazyPrepare(sqlite, 'SELECT block FROM reminder_search_fts_data WHERE id = 1')
    // Context candidates come from `reminder_context_fts` (migration 0010): only context
    // reminders' tags and pattern, so message words common in titles and bodies cost nothing.
    this.contextStmt = lazyPrepare(sqlite, `SELECT ${rowSelect('r')} FROM reminder_context_fts c JOIN reminders r ON r.doc_id = c.rowid
      WHERE reminder_context_fts MATCH ? AND c.rowid >= ? AND c.rowid < ?
        AND r.agent_id = ? AND r.trigger_type = 'context'
        AND (r.status = 'pending' OR (r.status = 'snoozed' AND r.snooze_until <= ?))`)
    // The user message goes into a one-row temp FTS table with the same tokenizer, so "is every
    // pattern term in the message" is answered by FTS5 itself, stemming included.
    sqlite.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.turn_message
      USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')`)
    this.clearMessage = lazyPrepare(sqlite, 'DELETE FROM temp.turn_message')
    this.putMessage = lazyPrepare(sqlite, 'INSERT INTO temp.turn_message (text) VALUES (?)')
    this.messageHas = lazyPrepare(sqlite, 'SELECT 1 AS one FROM temp.turn_message WHERE turn_message MATCH ?')
  }

  /** Best first; scores strictly decrease with BM25 relevance (ties share a score, oldest first). */
  search(agentId: string, q: string, limit = 20): { items: { reminder: Reminder; score: number }[] } {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
      throw unprocessable(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}.`, [{ path: fieldPath('querystring', 'limit'), message: 'out of range' }])
    }
    // OR: a reminder that shares more (and rarer) words with the query ranks higher.
    const match = ftsQuery(q, 'OR')
    const range = this.store.docRange(agentId)
    if (match === null || range === null) return { items: [] }
    const block = this.averagesStmt.pluck(true).get()
    const weights = block === undefined ? null : searchWeights(decodeAverages(block))
    if (weights === null) return { items: [] }
    // Raw rows: the reminder's columns (rowFromArray), then the FTS5 rank.
    const rows = this.searchStmt.raw(true).all(...weights, match, range.lo, range.hi, limit, agentId)
    return { items: rows.map((a) => ({ reminder: toReminder(rowFromArray(a)), score: bm25Score(a[a.length - 1] as number) })) }
  }

  /**
   * Context reminders the message triggers. Rule: a live context reminder (pending, or snoozed
   * with the snooze over) matches when **every** word of its pattern occurs in the message, or
   * every word of any one of its context tags does (stemmed: "deploying" matches "deploy").
   * Candidates come from the index (a pattern or tag sharing any word with the message); the
   * all-words check then runs against the message alone.
   */
  contextMatches(agentId: string, message: string, nowMs: number): ReminderRow[] {
    const any = ftsQuery(message, 'OR', MAX_MESSAGE_TERMS)
    const range = this.store.docRange(agentId)
    if (any === null || range === null) return []
    const candidates = this.contextStmt.raw(true).all(any, range.lo, range.hi, agentId, nowMs).map(rowFromArray)
    if (candidates.length === 0) return []
    this.clearMessage.run()
    this.putMessage.run(message)
    try {
      return candidates.filter((row) => {
        const phrases = [row.trigger_pattern ?? '', ...(JSON.parse(row.context_tags) as string[])]
        return phrases.some((p) => {
          const all = ftsQuery(p, 'AND')
          return all !== null && this.messageHas.get(all) !== undefined
        })
      })
    } finally {
      this.clearMessage.run()
    }
  }
}
