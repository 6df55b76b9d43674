import { describe, expect, it } from 'vitest'
import { ROW_COLUMNS, rowFromArray, rowSelect } from '../../src/reminders/model.js'
import { reminderFixture } from './fixtures.js'

describe('raw reminder rows', () => {
  it('ROW_COLUMNS is every column of reminders, and rowFromArray rebuilds the keyed row', () => {
    const f = reminderFixture()
    const tableColumns = f.handle.sqlite.prepare("SELECT name FROM pragma_table_info('reminders')").pluck().all()
    expect([...ROW_COLUMNS].sort()).toEqual([...(tableColumns as string[])].sort())
    f.reminders.create('agt_a', { title: 'a', body: 'b', context_tags: ['x y'], trigger: { type: 'context', pattern: 'deploy' } })
    f.reminders.create('agt_a', { title: 'c', quiet_hours_exempt: true, priority: 'urgent', trigger: { type: 'recurring', cron: '0 9 * * 1', timezone: 'Europe/Paris' } })
    const objects = f.handle.sqlite.prepare('SELECT * FROM reminders ORDER BY doc_id').all()
    const arrays = f.handle.sqlite.prepare(`SELECT ${rowSelect('r')}, 42 FROM reminders r ORDER BY doc_id`).raw(true).all() as unknown[][]
    expect(arrays.map(rowFromArray)).toEqual(objects)
  })
})
