import { describe, expect, it } from 'vitest'
import { ROW_COLUMNS } from '../../src/reminders/model.js'
import { reminderFixture } from './fixtures.js'

// Columns the repository keeps to itself: SQLite's FTS key, the ticker's lease, PostgreSQL's search documents.
const INTERNAL = ['doc_id', 'claimed_until', 'search_doc', 'context_doc']

describe('reminder rows', () => {
  it('ROW_COLUMNS is every column of reminders but the internal ones, and rows come back alike on both dialects', async () => {
    const f = await reminderFixture()
    const columns =
      f.db.dialect === 'sqlite'
        ? await f.db.all<{ name: string }>("SELECT name FROM pragma_table_info('reminders')")
        : await f.db.all<{ name: string }>("SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'reminders'")
    expect([...ROW_COLUMNS].sort()).toEqual(
      columns
        .map((c) => c.name)
        .filter((c) => !INTERNAL.includes(c))
        .sort(),
    )
    const a = await f.reminders.create('agt_a', { title: 'a', body: 'b', context_tags: ['x y'], trigger: { type: 'context', pattern: 'deploy' } })
    const c = await f.reminders.create('agt_a', { title: 'c', quiet_hours_exempt: true, priority: 'urgent', trigger: { type: 'recurring', cron: '0 9 * * 1', timezone: 'Europe/Paris' } })
    const rowA = await f.repo.get('agt_a', a.id)
    const rowC = await f.repo.get('agt_a', c.id)
    expect(Object.keys(rowA!).sort()).toEqual([...ROW_COLUMNS].sort())
    // Booleans as 0/1 and epoch ms as numbers, whatever the column type.
    expect(rowA).toMatchObject({ quiet_hours_exempt: 0, context_tags: '["x y"]', trigger_pattern: 'deploy', next_fire_at: null })
    expect(rowC).toMatchObject({ quiet_hours_exempt: 1, priority: 'urgent', trigger_timezone: 'Europe/Paris' })
    expect(typeof rowC!.next_fire_at).toBe('number')
    expect(typeof rowC!.created_at).toBe('number')
  })
})
