import { describe, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { createSession, postStep } from './sessions-fixtures.js'

type Problem = { type: string; status: number; detail: string; errors?: { path: string; message: string }[] }

// The one errors[].path format: the request part, then the field's segments.
const PATH_FORMAT = /^(body|querystring|params|headers)(\/[A-Za-z0-9_]+)+$/
const NOW = Date.parse('2026-11-22T09:00:00.000Z')

async function setup(env: Record<string, string> = {}): Promise<TestApp & { a: TestAgent }> {
  const t = await buildTestApp({ clock: () => NOW, env })
  return { ...t, a: await t.createAgent('a') }
}

async function problemOf(t: TestApp & { a: TestAgent }, req: { method?: 'GET' | 'POST' | 'PUT' | 'PATCH'; url: string; payload?: object }, status: number) {
  const res = await t.app.inject({ ...req, headers: t.a.headers })
  expect(res.statusCode, `${req.method ?? 'GET'} ${req.url} ${JSON.stringify(req.payload ?? '')} → ${res.body}`).toBe(status)
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  const body = res.json<Problem>()
  for (const e of body.errors ?? []) expect(e.path).toMatch(PATH_FORMAT)
  return body
}

describe('errors[].path has the 400 format on 422s too', () => {
  it('a cron that never fires, a private webhook URL and an unknown timezone', async () => {
    const t = await setup()
    const cron = await problemOf(t, { method: 'POST', url: '/v1/reminders', payload: { title: 'x', trigger: { type: 'recurring', cron: '0 0 31 2 *' } } }, 422)
    expect(cron.errors).toEqual([{ path: 'body/trigger/cron', message: 'never fires' }])
    const hook = await problemOf(t, { method: 'POST', url: '/v1/webhooks', payload: { url: 'http://127.0.0.1:9/hook' } }, 422)
    expect(hook.errors).toEqual([{ path: 'body/url', message: expect.stringContaining('non-public') }])
    const tz = await problemOf(t, { method: 'PUT', url: '/v1/settings', payload: { timezone: 'Mars/X' } }, 422)
    expect(tz.errors).toEqual([{ path: 'body/timezone', message: 'unknown IANA timezone' }])
  })

  it('every other field a service refuses, in the body or the query string', async () => {
    const t = await setup()
    const trigger = { type: 'context', pattern: 'deploy' }
    const cases: Array<[Parameters<typeof problemOf>[1], string]> = [
      [{ method: 'POST', url: '/v1/reminders', payload: { title: ' ', trigger } }, 'body/title'],
      [{ method: 'POST', url: '/v1/reminders', payload: { title: 'x', context_tags: ['ci', ' '], trigger } }, 'body/context_tags/1'],
      [{ method: 'POST', url: '/v1/reminders', payload: { title: 'x', trigger: { type: 'context', pattern: '!!!' } } }, 'body/trigger/pattern'],
      [{ method: 'POST', url: '/v1/reminders', payload: { title: 'x', trigger: { type: 'recurring', cron: '0 9 * * *', timezone: 'Moon/Base' } } }, 'body/trigger/timezone'],
      [{ method: 'POST', url: '/v1/reminders', payload: { title: 'x', trigger: { type: 'scheduled', at: 'tomorrow' } } }, 'body/trigger/at'],
      [{ method: 'POST', url: '/v1/turns', payload: { user_message: 'hi', now: 'later' } }, 'body/now'],
      [{ method: 'POST', url: '/v1/webhooks', payload: { url: 'ftp://example.com/hook' } }, 'body/url'],
    ]
    const r = await t.app.inject({ method: 'POST', url: '/v1/reminders', headers: t.a.headers, payload: { title: 'x', trigger: { type: 'scheduled', at: '2026-11-23T09:00:00Z' } } })
    const id = r.json<{ id: string }>().id
    cases.push(
      [{ method: 'POST', url: `/v1/reminders/${id}/snooze`, payload: {} }, 'body/minutes'],
      [{ method: 'POST', url: `/v1/reminders/${id}/snooze`, payload: { until: 'soon' } }, 'body/until'],
      [{ url: `/v1/reminders/${id}/occurrences?from=yesterday` }, 'querystring/from'],
    )
    for (const [req, path] of cases) {
      const body = await problemOf(t, req, 422)
      expect(body.errors?.map((e) => e.path), req.url).toEqual([path])
    }
  })

  it('a session config the engine refuses', async () => {
    const t = await setup()
    const body = await problemOf(t, { method: 'POST', url: '/v1/sessions', payload: { goal: 'g', config: { full_cutoff: 10, compact_cutoff: 2 } } }, 400)
    expect(body.errors).toEqual([{ path: 'body/config/compact_cutoff', message: expect.any(String) }])
  })
})

describe('a malformed cursor is a 400 on every list', () => {
  it('id-keyed and number-keyed lists alike, and a cursor of another list too', async () => {
    const t = await setup({ GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' })
    const sid = await createSession(t, t.a)
    await postStep(t, t.a, sid, 'design the user schema')
    const hook = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: t.a.headers, payload: { url: 'http://127.0.0.1:9/hook' } })
    const wid = hook.json<{ id: string }>().id
    const lists = ['/v1/sessions', '/v1/reminders', '/v1/webhooks', `/v1/webhooks/${wid}/deliveries`, `/v1/sessions/${sid}/steps`, `/v1/sessions/${sid}/drift/events`]
    for (const list of lists) {
      for (const cursor of ['garbage', '!!!', 'ses_x y', 'rem_' + 'a'.repeat(80), '-1']) {
        const res = await t.app.inject({ url: `${list}?cursor=${encodeURIComponent(cursor)}`, headers: t.a.headers })
        expect(res.statusCode, `${list}?cursor=${cursor} → ${res.body}`).toBe(400)
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
        expect(res.json<Problem>().errors).toEqual([{ path: 'querystring/cursor', message: expect.any(String) }])
      }
    }
    // Another list's id is no cursor here either.
    expect((await t.app.inject({ url: `/v1/reminders?cursor=${sid}`, headers: t.a.headers })).statusCode).toBe(400)
    const agents = await t.app.inject({ url: '/v1/agents?cursor=garbage', headers: t.adminHeaders })
    expect(agents.statusCode).toBe(400)
    expect(agents.json<Problem>().errors).toEqual([{ path: 'querystring/cursor', message: expect.any(String) }])
    // A cursor of the right shape still pages.
    expect((await t.app.inject({ url: `/v1/sessions?cursor=${sid}`, headers: t.a.headers })).json()).toEqual({ items: [], next_cursor: null })
    expect((await t.app.inject({ url: `/v1/sessions/${sid}/steps?cursor=0`, headers: t.a.headers })).json().items).toHaveLength(1)
  })
})
