import fc from 'fast-check'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { backend, sqliteOf } from '../helpers.js'
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { ReminderSearch } from '../../src/reminders/search.js'
import { ReminderRepository } from '../../src/reminders/repository.js'
import { RemindersService } from '../../src/reminders/service.js'
import { SettingsService } from '../../src/reminders/settings.js'
import { reminderFixture } from './fixtures.js'

const ctx = (pattern: string) => ({ type: 'context' as const, pattern })

describe('search', () => {
  it('ranks a better match first with strictly decreasing scores in (0, 1)', async () => {
    const f = await reminderFixture()
    await f.settings.put('agt_a', { max_reminders: 1000 })
    // A corpus big enough that BM25's IDF is meaningful (on a handful of rows it clamps to ~0).
    for (let i = 0; i < 30; i++) await f.reminders.create('agt_a', { title: `Errand ${i}`, body: 'buy milk and bread', trigger: ctx('shop') })
    const weak = await f.reminders.create('agt_a', { title: 'Standup notes', body: 'mention the database migration', trigger: ctx('x') })
    const strong = await f.reminders.create('agt_a', { title: 'Database migration review', body: 'check the migration rollback', trigger: ctx('x') })
    const mid = await f.reminders.create('agt_a', { title: 'Database backup', body: 'nightly', trigger: ctx('x') })
    const { items } = await f.search.search('agt_a', 'database migration')
    // BM25 (SQLite) saturates a term's weight and weighs rare words more: both words in the body
    // beat one in the title. ts_rank (PostgreSQL) adds column weights without saturation: the title
    // hit wins there (search.ts says how the two orderings differ).
    const expected = backend === 'sqlite' ? [strong.id, weak.id, mid.id] : [strong.id, mid.id, weak.id]
    expect(items.map((i) => i.reminder.id)).toEqual(expected)
    for (let i = 0; i < items.length; i++) {
      const s = items[i]?.score ?? 0
      expect(s).toBeGreaterThan(0)
      expect(s).toBeLessThan(1)
      if (i > 0) expect(s).toBeLessThan(items[i - 1]?.score ?? 0)
    }
  })

  it('stems, ignores case and diacritics, searches tags and patterns', async () => {
    const f = await reminderFixture()
    const r = await f.reminders.create('agt_a', { title: 'Café opening', context_tags: ['Deploying'], trigger: ctx('kubernetes rollout') })
    // PostgreSQL's 'english' configuration keeps diacritics (no unaccent): there "CAFE" finds nothing.
    if (backend === 'sqlite') expect((await f.search.search('agt_a', 'CAFE')).items.map((i) => i.reminder.id)).toEqual([r.id])
    expect((await f.search.search('agt_a', 'CAFÉ')).items.map((i) => i.reminder.id)).toEqual([r.id])
    expect((await f.search.search('agt_a', 'deploy')).items.map((i) => i.reminder.id)).toEqual([r.id])
    expect((await f.search.search('agt_a', 'rollouts')).items.map((i) => i.reminder.id)).toEqual([r.id])
  })

  it('FTS syntax in the query cannot error; punctuation-only gives nothing', async () => {
    const f = await reminderFixture()
    await f.reminders.create('agt_a', { title: 'near the end', trigger: ctx('x') })
    expect((await f.search.search('agt_a', '"')).items).toEqual([])
    expect((await f.search.search('agt_a', '*** (( ))')).items).toEqual([])
    expect((await f.search.search('agt_a', 'NEAR(end "the" -x) AND OR NOT *')).items).toHaveLength(1)
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), async (q) => {
        expect(Array.isArray((await f.search.search('agt_a', q)).items)).toBe(true)
      }),
      { numRuns: 300 },
    )
  })

  it("follows edits and deletes, and never returns another agent's reminders", async () => {
    const f = await reminderFixture()
    const r = await f.reminders.create('agt_a', { title: 'alpha', trigger: ctx('x') })
    await f.reminders.create('agt_b', { title: 'alpha beta', trigger: ctx('x') })
    await f.reminders.patch('agt_a', r.id, { title: 'gamma' })
    expect((await f.search.search('agt_a', 'alpha')).items).toEqual([])
    expect((await f.search.search('agt_a', 'gamma')).items).toHaveLength(1)
    await f.reminders.delete('agt_a', r.id)
    expect((await f.search.search('agt_a', 'gamma')).items).toEqual([])
    expect((await f.search.search('agt_b', 'alpha')).items).toHaveLength(1)
  })
})

describe('context matching (turn start)', () => {
  it('matches when every pattern word, or every word of one tag, is in the message', async () => {
    const f = await reminderFixture()
    const deploy = await f.reminders.create('agt_a', { title: 'Run the tests', trigger: ctx('deploy production') })
    const tagged = await f.reminders.create('agt_a', { title: 'Ping Sam', context_tags: ['billing api'], trigger: ctx('invoices') })
    await f.reminders.create('agt_a', { title: 'Timed', context_tags: ['deploy'], trigger: { type: 'scheduled', at: '2026-12-01T00:00:00Z' } })
    const m = async (msg: string) => (await f.search.contextMatches('agt_a', msg, f.time.now)).map((r) => r.id).sort()
    expect(await m('We are deploying to Production now')).toEqual([deploy.id])
    expect(await m('deploy to staging')).toEqual([])
    expect(await m('the Billing API is down')).toEqual([tagged.id])
    expect(await m('billing only')).toEqual([])
    expect(await m('invoices and deploys to production')).toEqual([deploy.id, tagged.id].sort())
    expect(await m('"*(')).toEqual([])
    expect(await f.search.contextMatches('agt_b', 'deploy production', f.time.now)).toEqual([])
  })

  it('skips fired, finished and still-snoozed context reminders', async () => {
    const f = await reminderFixture()
    const a = await f.reminders.create('agt_a', { title: 'a', trigger: ctx('release') })
    await f.reminders.snooze('agt_a', a.id, { minutes: 30 })
    expect(await f.search.contextMatches('agt_a', 'release', f.time.now)).toEqual([])
    f.advance(30)
    expect((await f.search.contextMatches('agt_a', 'release', f.time.now)).map((r) => r.id)).toEqual([a.id])
    await f.reminders.trigger('agt_a', a.id)
    expect(await f.search.contextMatches('agt_a', 'release', f.time.now)).toEqual([])
  })
})

// SQLite's FTS5 index (its triggers, VACUUM, query plans); PostgreSQL has no side index to keep in sync.
describe.skipIf(backend === 'postgres')('FTS migration', () => {
  it('survives runMigrations on a fresh file and a re-open, with the index in sync', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-fts-'))
    try {
      const path = join(dir, 'gk.db')
      const first = openDb(path)
      runMigrations(first)
      first.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_a', 'a', 0)").run()
      const clock = () => Date.parse('2026-11-22T09:00:00Z')
      const svc = new RemindersService(new ReminderRepository(first.db), new SettingsService(new ReminderRepository(first.db), clock), clock)
      const kept = await svc.create('agt_a', { title: 'persistent lighthouse', trigger: ctx('x') })
      await first.close()

      const again = openDb(path)
      runMigrations(again)
      again.sqlite.exec('VACUUM')
      const search = new ReminderSearch(new ReminderRepository(again.db))
      expect((await search.search('agt_a', 'lighthouse')).items.map((i) => i.reminder.id)).toEqual([kept.id])
      expect(again.sqlite.prepare("INSERT INTO reminder_search_fts(reminder_search_fts, rank) VALUES ('integrity-check', 1)").run()).toBeDefined()
      // Deleting the agent cascades to its reminders and through the trigger to the index.
      again.sqlite.prepare("DELETE FROM agents WHERE id = 'agt_a'").run()
      expect(again.sqlite.prepare("SELECT count(*) AS n FROM reminder_search_fts WHERE reminder_search_fts MATCH 'lighthouse'").get()).toEqual({ n: 0 })
      await again.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('the scheduler and due queries use the partial next_fire_at indexes', async () => {
    const f = await reminderFixture()
    const plan = (sql: string) => (sqliteOf(f.handle).prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(' | ')
    expect(plan('SELECT id FROM reminders WHERE next_fire_at IS NOT NULL AND next_fire_at <= 5 ORDER BY next_fire_at')).toMatch(/reminders_next_fire_idx/)
    expect(plan("SELECT * FROM reminders WHERE agent_id = 'a' AND next_fire_at IS NOT NULL AND next_fire_at <= 5 ORDER BY next_fire_at, id")).toMatch(/reminders_agent_due_idx/)
    expect(plan("SELECT * FROM reminders WHERE agent_id = 'a' AND status = 'pending' AND id > 'x' ORDER BY id LIMIT 5")).toMatch(/reminders_agent_status_idx/)
  })
})
