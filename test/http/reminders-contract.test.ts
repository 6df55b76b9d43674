import { describe, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { createSession } from './sessions-fixtures.js'

const NOW = Date.parse('2026-11-22T09:00:00.000Z')

async function setup(): Promise<TestApp & { a: TestAgent; b: TestAgent }> {
  const t = await buildTestApp({ clock: () => NOW })
  // Not a spread: TestApp's `sqlite` getter throws on PostgreSQL.
  return Object.assign(t, { a: await t.createAgent('a'), b: await t.createAgent('b') })
}

/** Every row a reminder write can touch, for before/after comparisons. */
async function dumpReminderTables(t: TestApp): Promise<unknown> {
  const q = (sql: string) => t.db.all(sql)
  return {
    reminders: await q('SELECT * FROM reminders ORDER BY id'),
    // SQLite's FTS5 rowid blocks; PostgreSQL has none.
    doc_blocks: t.db.dialect === 'sqlite' ? await q('SELECT * FROM reminder_doc_blocks ORDER BY agent_id') : [],
    fires: await q('SELECT * FROM reminder_fires'),
    sessions: await q('SELECT id, agent_id, version FROM sessions ORDER BY id'),
    messages: await q('SELECT id, event_type, payload FROM webhook_messages ORDER BY id'),
    idempotency: await q('SELECT * FROM idempotency_keys'),
  }
}

const at = (iso: string) => ({ type: 'scheduled', at: iso })

describe('reminder session_id belongs to the caller', () => {
  it('create: an unknown or foreign session is a 404 naming it, and nothing is stored', async () => {
    const t = await setup()
    const mine = await createSession(t, t.a)
    const theirs = await createSession(t, t.b)
    const post = (session_id: string, key?: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/reminders',
        headers: { ...t.a.headers, ...(key ? { 'idempotency-key': key } : {}) },
        payload: { title: 'x', trigger: at('2026-11-22T10:00:00Z'), session_id },
      })
    const before = await dumpReminderTables(t)
    for (const [id, key] of [
      ['ses_nope', undefined],
      [theirs, undefined],
      [theirs, 'k1'],
    ] as const) {
      const res = await post(id, key)
      expect(res.statusCode, id).toBe(404)
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/)
      expect(res.json()).toMatchObject({ status: 404, detail: expect.stringContaining(id), errors: [{ path: 'body/session_id', message: 'is not one of your sessions' }] })
    }
    expect(await dumpReminderTables(t)).toEqual(before)
    const ok = await post(mine, 'k1')
    expect(ok.statusCode).toBe(201)
    expect(ok.json().session_id).toBe(mine)
  })

  it('patch: an unknown or foreign session is a 404 and changes nothing; null unlinks', async () => {
    const t = await setup()
    const mine = await createSession(t, t.a)
    const other = await createSession(t, t.a)
    const theirs = await createSession(t, t.b)
    const r = (await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: t.a.headers, payload: { title: 'x', trigger: at('2026-11-22T10:00:00Z'), session_id: mine } })).json()
    const patch = (payload: object) => t.app.inject({ method: 'PATCH', url: `/v1/reminders/${r.id}`, headers: t.a.headers, payload })
    const before = await dumpReminderTables(t)
    for (const id of ['ses_nope', theirs]) {
      const res = await patch({ session_id: id, title: 'changed' })
      expect(res.statusCode, id).toBe(404)
      expect(res.json().detail).toContain(id)
    }
    expect(await dumpReminderTables(t)).toEqual(before)
    expect((await patch({ session_id: other })).json().session_id).toBe(other)
    expect((await patch({ session_id: null })).json().session_id).toBeNull()
  })

  it("deleting a session unlinks its reminders (they stay) and touches no one else's", async () => {
    const t = await setup()
    const doomed = await createSession(t, t.a)
    const kept = await createSession(t, t.a)
    const theirs = await createSession(t, t.b)
    const mk = (agent: TestAgent, session_id: string | null) =>
      t.app.inject({ method: 'POST', url: '/v1/reminders', headers: agent.headers, payload: { title: 'x', trigger: at('2026-11-22T10:00:00Z'), session_id } })
    const linked = (await mk(t.a, doomed)).json()
    const other = (await mk(t.a, kept)).json()
    const b = (await mk(t.b, theirs)).json()
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/sessions/${doomed}`, headers: t.a.headers })).statusCode).toBe(204)
    const get = async (agent: TestAgent, id: string) => (await t.app.inject({ url: `/v1/reminders/${id}`, headers: agent.headers })).json()
    expect(await get(t.a, linked.id)).toEqual({ ...linked, session_id: null })
    expect(await get(t.a, other.id)).toEqual(other)
    expect(await get(t.b, b.id)).toEqual(b)
  })
})

describe('GET /v1/reminders/due is a list', () => {
  it('pages every due reminder once, in id order, with next_cursor', async () => {
    const t = await setup()
    const h = t.a.headers
    // Fire times deliberately out of creation order, plus reminders that are not due.
    const times = ['08:50', '07:00', '08:59', '06:30', '09:00', '08:00', '05:00']
    const due: string[] = []
    for (const hm of times) {
      due.push((await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: hm, trigger: at(`2026-11-22T${hm}:00Z`) } })).json().id)
    }
    await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: 'later', trigger: at('2026-11-22T12:00:00Z') } })
    await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: 'ctx', trigger: { type: 'context', pattern: 'x' } } })
    const seen: string[] = []
    const sizes: number[] = []
    let cursor: string | null = null
    do {
      const url: string = `/v1/reminders/due?as_of=2026-11-22T09:00:00Z&limit=3${cursor ? `&cursor=${cursor}` : ''}`
      const res = await t.app.inject({ url, headers: h })
      expect(res.statusCode).toBe(200)
      const page = res.json() as { items: { id: string }[]; next_cursor: string | null }
      seen.push(...page.items.map((r) => r.id))
      sizes.push(page.items.length)
      cursor = page.next_cursor
    } while (cursor)
    expect(sizes).toEqual([3, 3, 1])
    expect(seen).toEqual([...due].sort())
    expect(new Set(seen).size).toBe(due.length)
    // The other agent sees none of them.
    expect((await t.app.inject({ url: '/v1/reminders/due?as_of=2026-11-22T09:00:00Z', headers: t.b.headers })).json()).toEqual({ items: [], next_cursor: null })
  })

  it('limit defaults to 50 and is 1-200; a malformed cursor is treated as on /v1/reminders', async () => {
    const t = await setup()
    const h = t.a.headers
    for (let i = 0; i < 52; i++) {
      await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: `r${i}`, trigger: at('2026-11-22T08:00:00Z') } })
    }
    const first = (await t.app.inject({ url: '/v1/reminders/due', headers: h })).json()
    expect(first.items).toHaveLength(50)
    expect(first.next_cursor).toBe(first.items[49].id)
    const rest = (await t.app.inject({ url: `/v1/reminders/due?cursor=${first.next_cursor}`, headers: h })).json()
    expect(rest.items).toHaveLength(2)
    expect(rest.next_cursor).toBeNull()
    for (const limit of ['0', '201', 'x']) {
      const res = await t.app.inject({ url: `/v1/reminders/due?limit=${limit}`, headers: h })
      expect(res.statusCode, limit).toBe(400)
      expect(res.headers['content-type']).toMatch(/problem\+json/)
    }
    // A malformed cursor is a 400 here as on /v1/reminders.
    for (const cursor of ['garbage', 'zzz', '%20', 'rem_', 'x'.repeat(129)]) {
      for (const list of ['/v1/reminders', '/v1/reminders/due']) {
        const res = await t.app.inject({ url: `${list}?cursor=${cursor}`, headers: h })
        expect(res.statusCode, `${list} ${cursor}`).toBe(400)
        expect(res.json().errors).toEqual([{ path: 'querystring/cursor', message: expect.any(String) }])
      }
    }
  })
})

describe('POST /v1/reminders/{id}/snooze takes minutes or until', () => {
  it('both, or neither, is a 400 that changes nothing', async () => {
    const t = await setup()
    const h = t.a.headers
    const r = (await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: 'x', trigger: at('2026-11-22T10:00:00Z') } })).json()
    const snooze = (payload: object) => t.app.inject({ method: 'POST', url: `/v1/reminders/${r.id}/snooze`, headers: h, payload })
    const before = await dumpReminderTables(t)
    const both = await snooze({ minutes: 30, until: '2026-11-22T11:00:00Z' })
    expect(both.statusCode).toBe(400)
    expect(both.headers['content-type']).toMatch(/application\/problem\+json/)
    expect(both.json().detail).toMatch(/minutes.*until|until.*minutes/)
    expect(both.json().detail).toMatch(/not both/)
    const neither = await snooze({})
    expect(neither.statusCode).toBe(400)
    expect(neither.headers['content-type']).toMatch(/application\/problem\+json/)
    expect(await dumpReminderTables(t)).toEqual(before)
    expect((await snooze({ until: '2026-11-22T11:00:00Z' })).json()).toMatchObject({ status: 'snoozed', snooze_until: '2026-11-22T11:00:00.000Z' })
  })
})
