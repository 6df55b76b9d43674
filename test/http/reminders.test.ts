import { describe, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'

const NOW = Date.parse('2026-11-22T09:00:00.000Z')

async function setup(): Promise<TestApp & { a: TestAgent; b: TestAgent }> {
  const t = await buildTestApp({ clock: () => NOW })
  // Not a spread: TestApp's `sqlite` getter throws on PostgreSQL.
  return Object.assign(t, { a: await t.createAgent('a'), b: await t.createAgent('b') })
}

describe('reminders over REST', () => {
  it('creates each trigger kind (Idempotency-Key replays) and reads it back', async () => {
    const t = await setup()
    const post = (payload: object, key?: string) => t.app.inject({ method: 'POST', url: '/v1/reminders', headers: { ...t.a.headers, ...(key ? { 'idempotency-key': key } : {}) }, payload })
    const first = await post({ title: 'Ship', trigger: { type: 'scheduled', at: '2026-11-22T10:00:00Z' } }, 'k1')
    expect(first.statusCode).toBe(201)
    const again = await post({ title: 'Ship', trigger: { type: 'scheduled', at: '2026-11-22T10:00:00Z' } }, 'k1')
    expect(again.json().id).toBe(first.json().id)
    const rec = await post({ title: 'Standup', trigger: { type: 'recurring', cron: '0 9 * * *', timezone: 'Europe/Paris' } })
    expect(rec.json()).toMatchObject({ trigger: { type: 'recurring', cron: '0 9 * * *', timezone: 'Europe/Paris' }, next_fire_at: '2026-11-23T08:00:00.000Z' })
    const ctx = await post({ title: 'Tests', trigger: { type: 'context', pattern: 'deploy' }, context_tags: ['ci'], priority: 'urgent' })
    expect(ctx.json()).toMatchObject({ status: 'pending', priority: 'urgent', context_tags: ['ci'], next_fire_at: null })
    const got = await t.app.inject({ url: `/v1/reminders/${first.json().id}`, headers: t.a.headers })
    expect(got.json()).toEqual(first.json())
    const list = await t.app.inject({ url: '/v1/reminders?limit=2', headers: t.a.headers })
    expect(list.json().items).toHaveLength(2)
    expect(list.json().next_cursor).toBe(list.json().items[1].id)
    const urgent = await t.app.inject({ url: '/v1/reminders?priority=urgent&trigger_type=context&tag=ci', headers: t.a.headers })
    expect(urgent.json().items.map((r: { id: string }) => r.id)).toEqual([ctx.json().id])
  })

  it('400 for malformed bodies, dates and crons, 422 for a cron that never fires and an unknown timezone, 429 over the quota', async () => {
    const t = await setup()
    const post = (payload: object) => t.app.inject({ method: 'POST', url: '/v1/reminders', headers: t.a.headers, payload })
    expect((await post({ title: 'x', trigger: { type: 'weekly' } })).statusCode).toBe(400)
    expect((await post({ title: 'x', trigger: { type: 'context', pattern: 'x' }, colour: 'red' })).statusCode).toBe(400)
    const never = await post({ title: 'x', trigger: { type: 'recurring', cron: '0 0 30 2 *' } })
    expect(never.statusCode).toBe(422)
    expect(never.headers['content-type']).toMatch(/problem\+json/)
    expect(never.json().detail).toMatch(/never fires/)
    // A malformed cron is a 400 naming the field; 422 is left for one that is well-formed but never fires.
    for (const cron of ['0 9 *', '0 25 * * *', 'every day']) {
      const bad = await post({ title: 'x', trigger: { type: 'recurring', cron } })
      expect([cron, bad.statusCode, bad.json().errors.map((e: { path: string }) => e.path)]).toEqual([cron, 400, ['body/trigger/cron']])
    }
    const six = await post({ title: 'x', trigger: { type: 'recurring', cron: '0 0 9 * * *' } })
    expect(six.statusCode).toBe(400)
    expect(six.json().type).toBe('urn:problem:validation_failed')
    expect(six.json().detail).toBe("Invalid cron expression '0 0 9 * * *': it has 6 fields; a cron expression here has exactly 5 fields: minute hour day-of-month month day-of-week.")
    expect((await post({ title: 'x', trigger: { type: 'recurring', cron: '0 9 * * *', timezone: 'Moon/Base' } })).json().detail).toMatch(/timezone/)
    const tomorrow = await post({ title: 'x', trigger: { type: 'scheduled', at: 'tomorrow' } })
    expect(tomorrow.statusCode).toBe(400)
    expect(tomorrow.json().errors).toEqual([{ path: 'body/trigger/at', message: 'must match format "date-time"' }])
    await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: t.a.headers, payload: { max_reminders: 1 } })
    expect((await post({ title: 'x', trigger: { type: 'context', pattern: 'x' } })).statusCode).toBe(201)
    const over = await post({ title: 'y', trigger: { type: 'context', pattern: 'y' } })
    expect(over.statusCode).toBe(429)
    expect(over.headers['retry-after']).toBeDefined()
  })

  it('lifecycle: snooze clamps, 409 on finished reminders, due, occurrences, delete', async () => {
    const t = await setup()
    const h = t.a.headers
    const r = (await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: 'x', priority: 'urgent', trigger: { type: 'scheduled', at: '2026-11-22T08:00:00Z' } } })).json()
    const due = await t.app.inject({ url: '/v1/reminders/due?as_of=2026-11-22T08:30:00Z', headers: h })
    expect(due.json().items.map((x: { id: string }) => x.id)).toEqual([r.id])
    const yesterday = await t.app.inject({ url: '/v1/reminders/due?as_of=yesterday', headers: h })
    expect(yesterday.statusCode).toBe(400)
    expect(yesterday.json().errors).toEqual([{ path: 'querystring/as_of', message: 'must match format "date-time"' }])
    const snoozed = await t.app.inject({ method: 'POST', url: `/v1/reminders/${r.id}/snooze`, headers: h, payload: { minutes: 600 } })
    expect(snoozed.json()).toMatchObject({ status: 'snoozed', snooze_until: '2026-11-22T10:00:00.000Z', clamped: true })
    const plain = await t.app.inject({ method: 'POST', url: `/v1/reminders/${r.id}/snooze`, headers: h, payload: { minutes: 30 } })
    expect(plain.json().clamped).toBeUndefined()
    const fired = await t.app.inject({ method: 'POST', url: `/v1/reminders/${r.id}/trigger`, headers: h })
    expect(fired.json()).toMatchObject({ status: 'triggered', triggered_at: '2026-11-22T09:00:00.000Z' })
    expect((await t.app.inject({ method: 'POST', url: `/v1/reminders/${r.id}/complete`, headers: h })).json().status).toBe('completed')
    const twice = await t.app.inject({ method: 'POST', url: `/v1/reminders/${r.id}/dismiss`, headers: h })
    expect(twice.statusCode).toBe(409)
    const cron = (
      await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: 'c', trigger: { type: 'recurring', cron: '30 2 * * *', timezone: 'America/New_York' } } })
    ).json()
    const occ = await t.app.inject({ url: `/v1/reminders/${cron.id}/occurrences?count=2&from=2026-03-07T12:00:00Z`, headers: h })
    expect(occ.json()).toEqual({ items: ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'] })
    expect((await t.app.inject({ url: `/v1/reminders/${cron.id}/occurrences?count=51`, headers: h })).statusCode).toBe(400)
    const patched = await t.app.inject({ method: 'PATCH', url: `/v1/reminders/${cron.id}`, headers: h, payload: { trigger: { type: 'recurring', cron: '0 12 * * *' } } })
    expect(patched.json().next_fire_at).toBe('2026-11-22T12:00:00.000Z')
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/reminders/${cron.id}`, headers: h })).statusCode).toBe(204)
    expect((await t.app.inject({ url: `/v1/reminders/${cron.id}`, headers: h })).statusCode).toBe(404)
  })

  it('search ranks better matches first; FTS syntax is harmless', async () => {
    const t = await setup()
    const h = t.a.headers
    for (let i = 0; i < 20; i++) {
      await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: `Errand ${i}`, body: 'milk', trigger: { type: 'context', pattern: 'shop' } } })
    }
    const best = (
      await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: 'Renew TLS certificate', body: 'certificate expires', trigger: { type: 'context', pattern: 'x' } } })
    ).json()
    const other = (
      await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: 'Audit', body: 'check the certificate list', trigger: { type: 'context', pattern: 'x' } } })
    ).json()
    const res = (await t.app.inject({ url: `/v1/reminders/search?q=${encodeURIComponent('TLS certificate')}`, headers: h })).json()
    expect(res.items.map((i: { reminder: { id: string } }) => i.reminder.id)).toEqual([best.id, other.id])
    expect(res.items[0].score).toBeGreaterThan(res.items[1].score)
    const weird = await t.app.inject({ url: `/v1/reminders/search?q=${encodeURIComponent('"(*')}`, headers: h })
    expect(weird.statusCode).toBe(200)
    expect(weird.json()).toEqual({ items: [] })
  })

  it('settings: defaults, partial PUT keeps the rest, validation', async () => {
    const t = await setup()
    const h = t.a.headers
    expect((await t.app.inject({ url: '/v1/settings', headers: h })).json()).toEqual({
      timezone: 'UTC',
      quiet_hours: null,
      max_reminders: 100,
      injection_budget_tokens: 1500,
      session_defaults: {},
      hooks: { max_stop_blocks: 3, tool_output: 'store' },
      daily_budget: null,
    })
    await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: h, payload: { timezone: 'Asia/Tokyo' } })
    const put = await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: h, payload: { quiet_hours: { start: '22:00', end: '07:00' } } })
    expect(put.json()).toMatchObject({ timezone: 'Asia/Tokyo', quiet_hours: { start: '22:00', end: '07:00' }, max_reminders: 100, injection_budget_tokens: 1500 })
    expect((await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: h, payload: { timezone: 'Nowhere' } })).statusCode).toBe(422)
    expect((await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: h, payload: { quiet_hours: { start: '25:00', end: '07:00' } } })).statusCode).toBe(400)
    expect((await t.app.inject({ url: '/v1/settings', headers: t.b.headers })).json().timezone).toBe('UTC')
  })

  it('turn start injects due and context reminders and marks them triggered; session ids are 404', async () => {
    const t = await setup()
    const h = t.a.headers
    const due = (
      await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: 'Rotate keys', priority: 'urgent', trigger: { type: 'scheduled', at: '2026-11-22T08:00:00Z' } } })
    ).json()
    const ctx = (await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: h, payload: { title: 'Run smoke tests', trigger: { type: 'context', pattern: 'deploy' } } })).json()
    const turn = await t.app.inject({ method: 'POST', url: '/v1/turns', headers: h, payload: { user_message: 'time to deploy' } })
    expect(turn.statusCode).toBe(200)
    const body = turn.json()
    expect(body.reminders.map((r: { id: string }) => r.id)).toEqual([due.id, ctx.id])
    expect(body.reminders.every((r: { status: string }) => r.status === 'triggered')).toBe(true)
    expect(body.injection.text).toContain('- [urgent] "Rotate keys"\n- [normal] "Run smoke tests"')
    expect(body.parts).toHaveLength(2)
    const unknown = await t.app.inject({ method: 'POST', url: '/v1/turns', headers: h, payload: { user_message: 'x', session_id: 'ses_x' } })
    expect(unknown.statusCode).toBe(404)
    const session = (await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: h, payload: { goal: 'Ship the billing API with tests' } })).json()
    const withSession = await t.app.inject({ method: 'POST', url: '/v1/turns', headers: h, payload: { user_message: 'x', session_id: session.id, iteration: 1 } })
    expect(withSession.statusCode).toBe(200)
    expect(withSession.json().parts.map((p: { kind: string }) => p.kind)).toContain('goal_reminder')
    expect(withSession.json().injection.text).toContain('billing API')
    // Another agent's session is a 404 too.
    const theirs = await t.app.inject({ method: 'POST', url: '/v1/turns', headers: t.b.headers, payload: { user_message: 'x', session_id: session.id } })
    expect(theirs.statusCode).toBe(404)
  })

  it("every reminder route with another agent's id is a 404", async () => {
    const t = await setup()
    const r = (await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: t.a.headers, payload: { title: 'mine', trigger: { type: 'scheduled', at: '2026-11-22T08:00:00Z' } } })).json()
    const calls: [string, string, object?][] = [
      ['GET', `/v1/reminders/${r.id}`],
      ['PATCH', `/v1/reminders/${r.id}`, { title: 'stolen' }],
      ['DELETE', `/v1/reminders/${r.id}`],
      ['POST', `/v1/reminders/${r.id}/complete`],
      ['POST', `/v1/reminders/${r.id}/dismiss`],
      ['POST', `/v1/reminders/${r.id}/snooze`, { minutes: 30 }],
      ['POST', `/v1/reminders/${r.id}/trigger`],
      ['GET', `/v1/reminders/${r.id}/occurrences`],
    ]
    for (const [method, url, payload] of calls) {
      const res = await t.app.inject({ method: method as 'GET', url, headers: t.b.headers, ...(payload ? { payload } : {}) })
      expect(res.statusCode, `${method} ${url}`).toBe(404)
    }
    const b = t.b.headers
    expect((await t.app.inject({ url: '/v1/reminders', headers: b })).json().items).toEqual([])
    expect((await t.app.inject({ url: '/v1/reminders/due?as_of=2027-01-01T00:00:00Z', headers: b })).json().items).toEqual([])
    expect((await t.app.inject({ url: '/v1/reminders/search?q=mine', headers: b })).json().items).toEqual([])
    expect((await t.app.inject({ method: 'POST', url: '/v1/turns', headers: b, payload: { user_message: 'mine' } })).json().reminders).toEqual([])
    expect((await t.app.inject({ url: `/v1/reminders/${r.id}`, headers: t.a.headers })).json()).toMatchObject({ title: 'mine', status: 'pending' })
    expect((await t.app.inject({ url: '/v1/reminders' })).statusCode).toBe(401)
  })
})
