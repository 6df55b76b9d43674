import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DRIVER, Sqlite } from '../../src/db/sqlite-driver.js'

it('loads better-sqlite3 13 on Node.js 22 and later, 12 on Node.js 20, and it opens a database', () => {
  const { name, version } = JSON.parse(readFileSync(join(DRIVER, '..', '..', 'package.json'), 'utf8')) as { name: string; version: string }
  expect(name).toBe('better-sqlite3')
  expect(version.split('.')[0]).toBe(Number(process.versions.node.split('.')[0]) >= 22 ? '13' : '12')
  const db = new Sqlite(':memory:')
  try {
    expect(db.prepare('SELECT 1 + 1 AS two').get()).toEqual({ two: 2 })
  } finally {
    db.close()
  }
})
