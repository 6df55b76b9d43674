import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { bm25Score, decodeAverages, ReminderSearch, searchWeights, SEARCH_WEIGHTS } from '../../src/reminders/search.js'
import { ReminderRepository } from '../../src/reminders/repository.js'
import { RemindersService } from '../../src/reminders/service.js'
import { DEFAULT_SETTINGS, SettingsService } from '../../src/reminders/settings.js'
import { migrationsBefore } from '../db/migrations-before.js'
import { backend } from '../helpers.js'
import { reminderFixture } from './fixtures.js'

const ctx = (pattern: string) => ({ type: 'context' as const, pattern })
const clock = () => Date.parse('2026-11-22T09:00:00Z')

/** SQLite varint, as FTS5 writes it (big-endian 7-bit groups; a ninth byte carries 8 bits). */
function varint(v: bigint): number[] {
  if (v > 0x00ffffffffffffffn) {
    const out = [Number(v & 0xffn)]
    v >>= 8n
    for (let i = 0; i < 8; i++, v >>= 7n) out.unshift(Number(v & 0x7fn) | 0x80)
    return out
  }
  const out = [Number(v & 0x7fn)]
  for (v >>= 7n; v > 0n; v >>= 7n) out.unshift(Number(v & 0x7fn) | 0x80)
  return out
}

// SQLite's FTS5 index: its BM25 weights, averages record and migrations (PostgreSQL ranks with ts_rank).
describe.skipIf(backend === 'postgres')('reminder_search_fts scoring', () => {
  it('decodes averages records like FTS5 writes them', async () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 0n, max: 2n ** 52n }), { minLength: 1, maxLength: 6 }), (vals) => {
        const d = decodeAverages(Uint8Array.from(vals.flatMap(varint)))
        expect(d.rows).toBe(Number(vals[0]))
        expect(d.tokens).toBe(vals.slice(1).reduce((a, b) => a + Number(b), 0))
      }),
    )
  })

  it('scores exactly BM25 with b = 0 under the column weights, on short and long reminders alike', async () => {
    for (const body of ['', 'a much longer body that talks about many other things before it ends']) {
      const f = await reminderFixture()
      await f.settings.put('agt_a', { max_reminders: 1000 })
      for (let i = 0; i < 40; i++) f.reminders.create('agt_a', { title: `Errand ${i}`, body, trigger: ctx('shop') })
      await f.reminders.create('agt_a', { title: 'lighthouse', body, trigger: ctx('x') })
      await f.reminders.create('agt_a', { title: 'keeper', body: `${body} lighthouse`, trigger: ctx('x') })
      await f.reminders.create('agt_a', { title: 'keeper', body, context_tags: ['lighthouse'], trigger: ctx('x') })
      // nRow = 43 rows, nHit = 3: idf = ln((N - n + 0.5) / (n + 0.5)); part = idf (k1 + 1) f / (f + k1).
      const idf = Math.log((43 - 3 + 0.5) / (3 + 0.5))
      const bm25 = (freq: number) => (idf * 2.2 * freq) / (freq + 1.2)
      const scores = (await f.search.search('agt_a', 'lighthouse')).items.map((i) => i.score)
      const expected = [SEARCH_WEIGHTS.title, SEARCH_WEIGHTS.tags, SEARCH_WEIGHTS.body].map((w) => bm25Score(-bm25(w)))
      expect(scores).toHaveLength(3)
      scores.forEach((s, i) => expect(s).toBeCloseTo(expected[i] as number, 9))
    }
  })

  it('keeps the length factor positive for any average row length', async () => {
    for (const avg of [0.01, 1, 5, 12, 40, 5000]) {
      const w = searchWeights({ rows: 100, tokens: (avg + 16) * 100 })
      expect(w).not.toBeNull()
      for (const x of w ?? []) expect(x).toBeGreaterThan(0)
    }
    expect(searchWeights({ rows: 0, tokens: 0 })).toBeNull()
  })

  it('no query reaches the pad column', async () => {
    const f = await reminderFixture()
    await f.reminders.create('agt_a', { title: 'alpha', trigger: ctx('x') })
    for (const q of ['\uE000', '\uE000 \uE000', '""', '{pad}: \uE000', 'pad']) expect((await f.search.search('agt_a', q)).items).toEqual([])
  })
})

describe.skipIf(backend === 'postgres')('0011 search index migration', () => {
  it('indexes the reminders that existed before it, drops reminders_fts and keeps edits in step', async () => {
    const before = migrationsBefore('0011')
    try {
      const h = openDb(':memory:')
      runMigrations(h, before.folder)
      h.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_a', 'a', 0)").run()
      // Settings as they were then: their table has no columns added since (e.g. session_defaults).
      const settings = { get: () => Promise.resolve({ ...DEFAULT_SETTINGS }) } as unknown as SettingsService
      const svc = new RemindersService(new ReminderRepository(h.db), settings, clock)
      const old = await svc.create('agt_a', { title: 'Lighthouse keeper', body: 'oil the lamp', context_tags: ['coastal'], trigger: ctx('storm warning') })
      await svc.create('agt_a', { title: 'Errand', body: 'buy bread', trigger: ctx('shop') })
      // Group commit: the batch commits after the turn; migrations open their own transaction.
      await h.db.committed()
      runMigrations(h)

      const names = h.sqlite.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'reminders_fts%'").pluck().all()
      expect(names).toEqual([])
      const search = new ReminderSearch(new ReminderRepository(h.db))
      const ids = async (q: string) => (await search.search('agt_a', q)).items.map((i) => i.reminder.id)
      for (const q of ['lighthouse', 'lamp', 'coastal', 'storms']) expect(await ids(q)).toEqual([old.id])
      expect(h.sqlite.prepare("INSERT INTO reminder_search_fts(reminder_search_fts) VALUES ('integrity-check')").run()).toBeDefined()

      // The triggers replay the exact old values, so edits and deletes leave a consistent index.
      await svc.patch('agt_a', old.id, { title: 'Harbour master', context_tags: [] })
      expect(await ids('lighthouse')).toEqual([])
      expect(await ids('coastal')).toEqual([])
      expect(await ids('harbour')).toEqual([old.id])
      await svc.delete('agt_a', old.id)
      expect(await ids('harbour')).toEqual([])
      expect(await ids('bread')).toHaveLength(1)
      expect(h.sqlite.prepare("INSERT INTO reminder_search_fts(reminder_search_fts) VALUES ('integrity-check')").run()).toBeDefined()
      await h.close()
    } finally {
      before.dispose()
    }
  })
})
