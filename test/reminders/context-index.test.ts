import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { ftsQuery } from '../../src/reminders/search.js'
import { migrationsBefore } from '../db/migrations-before.js'
import { backend, sqliteOf } from '../helpers.js'
import { reminderFixture } from './fixtures.js'

const WORDS = ['deploy', 'deploying', 'billing', 'api', 'release', 'invoice', 'kubernetes', 'rollout', 'cafe', 'Café']
const phrase = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }).map((w) => w.join(' '))
const trigger = fc.oneof(
  phrase.map((pattern) => ({ type: 'context' as const, pattern })),
  fc.constant({ type: 'scheduled' as const, at: '2026-12-01T00:00:00Z' }),
)
const op = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), agent: fc.constantFrom('agt_a', 'agt_b'), trigger, tags: fc.array(phrase, { maxLength: 2 }) }),
  fc.record({ kind: fc.constant('patch' as const), pick: fc.nat(), trigger: fc.option(trigger, { nil: undefined }), tags: fc.option(fc.array(phrase, { maxLength: 2 }), { nil: undefined }) }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
)

// SQLite's FTS5 side index; PostgreSQL matches the generated context_doc column instead (search.test.ts runs on both).
describe.skipIf(backend === 'postgres')('reminder_context_fts (context candidates for turn start)', () => {
  it('finds exactly the context reminders the full index finds, through creates, edits and deletes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), fc.array(phrase, { minLength: 1, maxLength: 4 }), async (ops, messages) => {
        const f = await reminderFixture()
        const sqlite = sqliteOf(f.handle)
        const ids: { agent: string; id: string }[] = []
        for (const o of ops) {
          if (o.kind === 'create') {
            const r = await f.reminders.create(o.agent, { title: 'deploy billing notes', body: 'release api', trigger: o.trigger, context_tags: o.tags })
            ids.push({ agent: o.agent, id: r.id })
          } else if (ids.length > 0) {
            const t = ids[o.pick % ids.length]!
            if (o.kind === 'delete') {
              await f.reminders.delete(t.agent, t.id)
              ids.splice(o.pick % ids.length, 1)
            } else {
              await f.reminders.patch(t.agent, t.id, { ...(o.trigger && { trigger: o.trigger }), ...(o.tags && { context_tags: o.tags }) })
            }
          }
        }
        // The reference: the same candidates from the search index (tags + pattern column).
        const reference = sqlite.prepare(`SELECT r.doc_id FROM reminder_search_fts s JOIN reminders r ON r.doc_id = s.rowid
          WHERE reminder_search_fts MATCH ? AND r.agent_id = ? AND r.trigger_type = 'context' ORDER BY r.doc_id`).pluck()
        const candidates = sqlite.prepare(`SELECT r.doc_id FROM reminder_context_fts c JOIN reminders r ON r.doc_id = c.rowid
          WHERE reminder_context_fts MATCH ? AND r.agent_id = ? ORDER BY r.doc_id`).pluck()
        for (const m of messages) {
          const any = ftsQuery(m, 'OR', 64)!
          for (const agent of ['agt_a', 'agt_b']) {
            expect(candidates.all(any, agent)).toEqual(reference.all(`{tags} : (${any})`, agent))
          }
        }
        // Only context reminders are in it.
        const indexed = sqlite.prepare('SELECT count(*) FROM reminder_context_fts').pluck().get()
        const context = sqlite.prepare("SELECT count(*) FROM reminders WHERE trigger_type = 'context'").pluck().get()
        expect(indexed).toBe(context)
        await f.handle.close()
      }),
      { numRuns: 60 },
    )
  })

  it('the migration indexes the context reminders that existed before it', async () => {
    const before = migrationsBefore('0010')
    try {
      const h = openDb(':memory:')
      runMigrations(h, before.folder)
      h.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_a', 'a', 0)").run()
      const insert = h.sqlite.prepare(`INSERT INTO reminders (id, doc_id, agent_id, title, trigger_type, trigger_pattern, context_tags, created_at, updated_at)
        VALUES (?, ?, 'agt_a', 't', ?, ?, ?, 0, 0)`)
      insert.run('rem_1', 1, 'context', 'release train', '["billing api"]')
      insert.run('rem_2', 2, 'scheduled', null, '["release"]')
      runMigrations(h)
      const match = (q: string) => h.sqlite.prepare('SELECT rowid FROM reminder_context_fts WHERE reminder_context_fts MATCH ?').pluck().all(q)
      expect(match('release')).toEqual([1])
      expect(match('billing')).toEqual([1])
      h.close()
    } finally {
      before.dispose()
    }
  })
})
