import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.js'
import { reminderFixture, statusOf } from './fixtures.js'

describe('RemindersService CRUD', () => {
  it('creates the three trigger kinds with API-shaped JSON and next_fire_at', async () => {
    const f = await reminderFixture()
    const at = await f.reminders.create('agt_a', { title: 'Ship', trigger: { type: 'scheduled', at: '2026-11-22T10:00:00+01:00' } })
    expect(at).toMatchObject({
      title: 'Ship',
      body: '',
      status: 'pending',
      priority: 'normal',
      context_tags: [],
      quiet_hours_exempt: false,
      session_id: null,
      missed_policy: 'once',
      trigger: { type: 'scheduled', at: '2026-11-22T09:00:00.000Z' },
      created_at: '2026-11-22T09:00:00.000Z',
      next_fire_at: '2026-11-22T09:00:00.000Z',
      triggered_at: null,
    })
    expect(at.id).toMatch(/^rem_/)
    const cron = await f.reminders.create('agt_a', {
      title: 'Standup',
      trigger: { type: 'recurring', cron: '0 9 * * *', timezone: 'Europe/Paris' },
      priority: 'urgent',
    })
    expect(cron.trigger).toEqual({ type: 'recurring', cron: '0 9 * * *', timezone: 'Europe/Paris' })
    expect(cron.next_fire_at).toBe('2026-11-23T08:00:00.000Z')
    const ctx = await f.reminders.create('agt_a', { title: 'Tests', trigger: { type: 'context', pattern: 'deploy' }, context_tags: ['ci', 'ci'] })
    expect(ctx.trigger).toEqual({ type: 'context', pattern: 'deploy' })
    expect(ctx.next_fire_at).toBeNull()
    expect(ctx.context_tags).toEqual(['ci'])
    expect(await f.reminders.get('agt_a', ctx.id)).toEqual(ctx)
  })

  it('400 for a date that is none and a malformed cron, 422 for a cron that never fires, timezones, empty titles and patterns', async () => {
    const f = await reminderFixture()
    expect(await statusOf(() => f.reminders.create('agt_a', { title: 'x', trigger: { type: 'scheduled', at: 'next tuesday' } }))).toBe(400)
    for (const cron of ['0 25 * * *', '* * *', 'hello']) {
      expect(await statusOf(() => f.reminders.create('agt_a', { title: 'x', trigger: { type: 'recurring' as const, cron } }))).toBe(400)
    }
    const bad = [
      { title: 'x', trigger: { type: 'recurring' as const, cron: '0 0 31 2 *' } },
      { title: 'x', trigger: { type: 'recurring' as const, cron: '0 9 * * *', timezone: 'Nowhere/City' } },
      { title: '  \u0000 ', trigger: { type: 'context' as const, pattern: 'x' } },
      { title: 'x', trigger: { type: 'context' as const, pattern: '?!' } },
      { title: 'x'.repeat(201), trigger: { type: 'context' as const, pattern: 'x' } },
    ]
    for (const input of bad) expect(await statusOf(() => f.reminders.create('agt_a', input))).toBe(422)
  })

  it('strips control characters but keeps newlines', async () => {
    const f = await reminderFixture()
    const r = await f.reminders.create('agt_a', { title: 'a\u0007b\u202Ec\r\nd', body: 'x\u0000y', trigger: { type: 'context', pattern: 'q' } })
    expect(r.title).toBe('abc\nd')
    expect(r.body).toBe('xy')
  })

  it('429 past max_reminders live reminders; completing one frees a slot', async () => {
    const f = await reminderFixture()
    await f.settings.put('agt_a', { max_reminders: 2 })
    const mk = () => f.reminders.create('agt_a', { title: 't', trigger: { type: 'context', pattern: 'x' } })
    const first = await mk()
    await mk()
    let err: unknown
    try {
      await mk()
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).status).toBe(429)
    expect((err as AppError).headers?.['retry-after']).toBeDefined()
    await f.reminders.complete('agt_a', first.id)
    expect((await mk()).status).toBe('pending')
    // The other agent has its own quota.
    expect((await f.reminders.create('agt_b', { title: 't', trigger: { type: 'context', pattern: 'x' } })).status).toBe('pending')
  })

  it('lists with filters and cursor pagination', async () => {
    const f = await reminderFixture()
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      f.advance(1)
      ids.push(
        (
          await f.reminders.create('agt_a', {
            title: `r${i}`,
            priority: i % 2 ? 'urgent' : 'low',
            context_tags: i === 3 ? ['ops'] : [],
            trigger: { type: 'context', pattern: 'x' },
          })
        ).id,
      )
    }
    await f.reminders.create('agt_b', { title: 'other', trigger: { type: 'context', pattern: 'x' } })
    const p1 = await f.reminders.list('agt_a', { limit: 2 })
    expect(p1.items.map((r) => r.id)).toEqual(ids.slice(0, 2))
    const p2 = await f.reminders.list('agt_a', { limit: 2, cursor: p1.next_cursor ?? '' })
    const p3 = await f.reminders.list('agt_a', { limit: 2, cursor: p2.next_cursor ?? '' })
    expect([...p2.items, ...p3.items].map((r) => r.id)).toEqual(ids.slice(2))
    expect(p3.next_cursor).toBeNull()
    expect((await f.reminders.list('agt_a', { priority: 'urgent' })).items.map((r) => r.title)).toEqual(['r1', 'r3'])
    expect((await f.reminders.list('agt_a', { tag: 'ops' })).items.map((r) => r.title)).toEqual(['r3'])
    await f.reminders.dismiss('agt_a', ids[0] as string)
    expect((await f.reminders.list('agt_a', { status: 'dismissed' })).items.map((r) => r.id)).toEqual([ids[0]])
    expect((await f.reminders.list('agt_a', { trigger_type: 'scheduled' })).items).toEqual([])
  })

  it('patching the trigger recomputes next_fire_at and re-arms a fired one-shot', async () => {
    const f = await reminderFixture()
    const r = await f.reminders.create('agt_a', { title: 't', trigger: { type: 'scheduled', at: '2026-11-22T08:00:00Z' } })
    const fired = await f.reminders.trigger('agt_a', r.id)
    expect(fired.status).toBe('triggered')
    expect(fired.next_fire_at).toBeNull()
    const moved = await f.reminders.patch('agt_a', r.id, { trigger: { type: 'scheduled', at: '2026-11-23T08:00:00Z' }, title: 'new' })
    expect(moved).toMatchObject({ status: 'pending', title: 'new', next_fire_at: '2026-11-23T08:00:00.000Z' })
    const cron = await f.reminders.patch('agt_a', r.id, { trigger: { type: 'recurring', cron: '0 12 * * *' } })
    expect(cron.next_fire_at).toBe('2026-11-22T12:00:00.000Z')
    expect(await statusOf(() => f.reminders.patch('agt_a', r.id, { trigger: { type: 'recurring', cron: 'nope' } }))).toBe(400)
  })

  it('recurring reminders without a timezone follow the agent settings timezone', async () => {
    const f = await reminderFixture()
    const r = await f.reminders.create('agt_a', { title: 't', trigger: { type: 'recurring', cron: '0 12 * * *' } })
    expect(r.next_fire_at).toBe('2026-11-22T12:00:00.000Z')
    await f.settings.put('agt_a', { timezone: 'Asia/Tokyo' })
    expect((await f.reminders.get('agt_a', r.id)).next_fire_at).toBe('2026-11-23T03:00:00.000Z')
    expect(await f.reminders.occurrences('agt_a', r.id, 2, '2026-11-22T00:00:00Z')).toEqual(['2026-11-22T03:00:00.000Z', '2026-11-23T03:00:00.000Z'])
  })

  it('occurrences count is bounded', async () => {
    const f = await reminderFixture()
    const r = await f.reminders.create('agt_a', { title: 't', trigger: { type: 'recurring', cron: '* * * * *' } })
    expect(await f.reminders.occurrences('agt_a', r.id, 50)).toHaveLength(50)
    expect(await statusOf(() => f.reminders.occurrences('agt_a', r.id, 51))).toBe(422)
    expect(await statusOf(() => f.reminders.occurrences('agt_a', r.id, 0))).toBe(422)
  })

  it('every call with another agent id is a 404', async () => {
    const f = await reminderFixture()
    const id = (await f.reminders.create('agt_a', { title: 't', trigger: { type: 'scheduled', at: '2026-11-22T08:00:00Z' } })).id
    const calls = [
      () => f.reminders.get('agt_b', id),
      () => f.reminders.patch('agt_b', id, { title: 'x' }),
      () => f.reminders.delete('agt_b', id),
      () => f.reminders.complete('agt_b', id),
      () => f.reminders.dismiss('agt_b', id),
      () => f.reminders.snooze('agt_b', id, { minutes: 30 }),
      () => f.reminders.trigger('agt_b', id),
      () => f.reminders.occurrences('agt_b', id),
    ]
    for (const call of calls) expect(await statusOf(call)).toBe(404)
    expect(await f.reminders.due('agt_b', Date.parse('2027-01-01T00:00:00Z'))).toEqual({ items: [], next_cursor: null })
    expect((await f.search.search('agt_b', 't')).items).toEqual([])
    expect((await f.reminders.get('agt_a', id)).status).toBe('pending')
    await f.reminders.delete('agt_a', id)
    expect(await statusOf(() => f.reminders.get('agt_a', id))).toBe(404)
  })
})
