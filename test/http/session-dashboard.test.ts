import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { createSession, dumpTables, GOAL, PLAN, postStep, RUN } from './sessions-fixtures.js'

/** The two read endpoints the dashboard added: the sessions overview and the next-turn preview. */
describe('GET /v1/sessions/overview', () => {
  it('lists sessions newest first with step count, last action and recent similarity, paged by cursor', async () => {
    let now = Date.parse('2026-11-22T09:00:00.000Z')
    const t = await buildTestApp({ clock: () => (now += 1000) })
    const a = await t.createAgent()
    const other = await t.createAgent('other')
    await createSession(t, other)
    const ids = [await createSession(t, a), await createSession(t, a), await createSession(t, a)]
    const steps = []
    for (const d of RUN.slice(0, 4)) steps.push((await postStep(t, a, ids[1]!, d)).json())
    await t.app.inject({ method: 'PATCH', url: `/v1/sessions/${ids[0]}`, headers: a.headers, payload: { status: 'archived' } })

    const first = await t.app.inject({ method: 'GET', url: '/v1/sessions/overview?limit=2', headers: a.headers })
    expect(first.statusCode).toBe(200)
    const page = first.json()
    expect(page.items.map((d: { session: { id: string } }) => d.session.id)).toEqual([ids[2], ids[1]])
    expect(page.next_cursor).toBe(ids[1])
    expect(page.items[0]).toMatchObject({ step_count: 0, last_action: null, last_step_at: null, recent_similarity: [] })
    const busy = page.items[1]
    expect(busy.session).toMatchObject({ id: ids[1], goal: GOAL, plan: PLAN, status: 'active' })
    expect(busy.step_count).toBe(4)
    expect(busy.last_action).toBe(steps[3].verification.recommended_action)
    expect(busy.last_step_at).toMatch(/Z$/)
    expect(busy.recent_similarity).toEqual(steps.map((s) => s.drift.similarity))

    const rest = (await t.app.inject({ method: 'GET', url: `/v1/sessions/overview?limit=2&cursor=${page.next_cursor}`, headers: a.headers })).json()
    expect(rest).toMatchObject({ items: [{ session: { id: ids[0], status: 'archived' } }], next_cursor: null })
    const archived = (await t.app.inject({ method: 'GET', url: '/v1/sessions/overview?status=archived', headers: a.headers })).json()
    expect(archived.items.map((d: { session: { id: string } }) => d.session.id)).toEqual([ids[0]])
  })

  it('keeps the sparkline to the last 40 steps, oldest first', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    const sims: number[] = []
    for (let i = 0; i < 45; i++) sims.push((await postStep(t, a, id, `${RUN[i % RUN.length]} ${i}`)).json().drift.similarity)
    const [digest] = (await t.app.inject({ method: 'GET', url: '/v1/sessions/overview', headers: a.headers })).json().items
    expect(digest.step_count).toBe(45)
    expect(digest.recent_similarity).toEqual(sims.slice(-40))
  })

  it('refuses a missing key (401) and a malformed cursor (400)', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    expect((await t.app.inject({ method: 'GET', url: '/v1/sessions/overview' })).statusCode).toBe(401)
    const bad = await t.app.inject({ method: 'GET', url: '/v1/sessions/overview?cursor=nope', headers: a.headers })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().errors[0].path).toBe('querystring/cursor')
  })
})

describe('GET /v1/sessions/{id}/next-turn', () => {
  it('previews the goal reminder and recitation of the next turn, and records nothing', async () => {
    const t = await buildTestApp({ clock: () => Date.parse('2026-11-22T09:00:00.000Z') })
    const a = await t.createAgent()
    const id = await createSession(t, a)
    for (const d of RUN.slice(0, 2)) await postStep(t, a, id, d)
    const before = await dumpTables(t)
    const summary = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/summary`, headers: a.headers })).json()
    const res = await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/next-turn`, headers: a.headers })
    expect(res.statusCode).toBe(200)
    const next = res.json()
    expect(next.iteration).toBe(3)
    expect(next.reminder.text).toContain(GOAL)
    expect(next.reminder.turn_number).toBe(3)
    const recitation = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/recitation?iteration=3`, headers: a.headers })).json()
    expect(next.recitation).toEqual(recitation)
    // Asked twice, it is the same answer: no reminder was recorded, no row written.
    expect((await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/next-turn`, headers: a.headers })).json()).toEqual(next)
    expect(await dumpTables(t)).toEqual(before)
    expect((await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/summary`, headers: a.headers })).json().reminders).toEqual(summary.reminders)

    // The next turn gets these very texts.
    const turn = (await t.app.inject({ method: 'POST', url: '/v1/turns', headers: a.headers, payload: { user_message: 'go on', session_id: id } })).json()
    const parts = turn.injection.text as string
    expect(parts).toContain(next.reminder.text)
    if (next.recitation.should_inject) expect(parts).toContain(next.recitation.text)
  })
})
