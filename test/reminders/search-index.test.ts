import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { bm25Score, decodeAverages, searchWeights, SEARCH_WEIGHTS } from '../../src/reminders/search.js'
import { backend, sqliteOf } from '../helpers.js'
import { reminderFixture } from './fixtures.js'

const ctx = (pattern: string) => ({ type: 'context' as const, pattern })

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

// SQLite's FTS5 index: its BM25 weights, averages record and triggers (PostgreSQL ranks with ts_rank).
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

  it('the triggers replay the exact old values, so edits and deletes leave a consistent index', async () => {
    const f = await reminderFixture()
    const sqlite = sqliteOf(f.handle)
    const integrity = () => sqlite.prepare("INSERT INTO reminder_search_fts(reminder_search_fts) VALUES ('integrity-check')").run()
    const old = await f.reminders.create('agt_a', { title: 'Lighthouse keeper', body: 'oil the lamp', context_tags: ['coastal'], trigger: ctx('storm warning') })
    await f.reminders.create('agt_a', { title: 'Errand', body: 'buy bread', trigger: ctx('shop') })
    const ids = async (q: string) => (await f.search.search('agt_a', q)).items.map((i) => i.reminder.id)
    for (const q of ['lighthouse', 'lamp', 'coastal', 'storms']) expect(await ids(q)).toEqual([old.id])
    await f.reminders.patch('agt_a', old.id, { title: 'Harbour master', context_tags: [] })
    expect(await ids('lighthouse')).toEqual([])
    expect(await ids('coastal')).toEqual([])
    expect(await ids('harbour')).toEqual([old.id])
    expect(integrity()).toBeDefined()
    await f.reminders.delete('agt_a', old.id)
    expect(await ids('harbour')).toEqual([])
    expect(await ids('bread')).toHaveLength(1)
    expect(integrity()).toBeDefined()
  })
})
