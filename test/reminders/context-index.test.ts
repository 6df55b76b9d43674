import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ftsQuery } from '../../src/reminders/search.js'
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
        const reference = sqlite
          .prepare(
            `SELECT r.doc_id FROM reminder_search_fts s JOIN reminders r ON r.doc_id = s.rowid
          WHERE reminder_search_fts MATCH ? AND r.agent_id = ? AND r.trigger_type = 'context' ORDER BY r.doc_id`,
          )
          .pluck()
        const candidates = sqlite
          .prepare(
            `SELECT r.doc_id FROM reminder_context_fts c JOIN reminders r ON r.doc_id = c.rowid
          WHERE reminder_context_fts MATCH ? AND r.agent_id = ? ORDER BY r.doc_id`,
          )
          .pluck()
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
})
