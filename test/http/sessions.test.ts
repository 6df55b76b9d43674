import { describe, expect, it } from 'vitest'
import { buildTestApp, subscribeToEvents } from '../helpers.js'
import { createSession, dumpTables, GOAL, PLAN, postStep, RUN, SESSION_ROUTES } from './sessions-fixtures.js'

describe('sessions lifecycle', () => {
  it('creates a session with the default config and returns it from get and list', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, plan: PLAN, metadata: { team: 'x' } } })
    expect(res.statusCode).toBe(201)
    const s = res.json()
    expect(s.id).toMatch(/^ses_/)
    expect(s).toMatchObject({ goal: GOAL, plan: PLAN, status: 'active', metadata: { team: 'x' } })
    expect(s.config).toEqual({
      similarity: 'lexical',
      drift_threshold: 0.15,
      consecutive_limit: 3,
      history_size: 200,
      full_cutoff: 5,
      compact_cutoff: 15,
      max_pitfalls: 5,
      max_tried: 5,
      drift_warning_threshold: 0.3,
      recitation: { frequency: 5, sources: ['goal', 'plan', 'todo'], max_tokens: 500 },
      llm_verify: false,
      escalation: 'graduated',
      alignment: 'evidence',
      drift_evidence: true,
      loop_kinds: ['repeat', 'error_repeat', 'same_result', 'error_cascade', 'same_edit'],
      busy_after: 8,
      budget_stall: { at: 0.5, calls: 10 },
    })
    expect(s.state).toMatchObject({ original_goal: GOAL, current_step: 0, total_steps_planned: 3, progress: 0, drift_score: 0, loop_detected: false })
    expect(s.state.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const got = await t.app.inject({ method: 'GET', url: `/v1/sessions/${s.id}`, headers: a.headers })
    expect(got.json()).toEqual(s)
    const list = await t.app.inject({ method: 'GET', url: '/v1/sessions', headers: a.headers })
    expect(list.json()).toEqual({ items: [s], next_cursor: null })
  })

  it('merges a partial config over the defaults and rejects bad ones with errors[]', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const ok = await t.app.inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: a.headers,
      payload: { goal: GOAL, config: { drift_threshold: 0.3, recitation: { frequency: 'adaptive' } } },
    })
    expect(ok.statusCode).toBe(201)
    expect(ok.json().config).toMatchObject({ drift_threshold: 0.3, consecutive_limit: 3, recitation: { frequency: 'adaptive', max_tokens: 500 } })
    const bad = [
      [{ goal: GOAL, config: { full_cutoff: 10, compact_cutoff: 2 } }, 'body/config/compact_cutoff'],
      [{ goal: GOAL, config: { drift_treshold: 0.2 } }, 'body/config/drift_treshold'],
      [{ goal: GOAL, config: { drift_threshold: 2 } }, 'body/config/drift_threshold'],
      [{ goal: '' }, 'body/goal'],
      [{ plan: ['x'] }, 'body/goal'],
      [{ goal: GOAL, plan: [''] }, 'body/plan/0'],
      [{ goal: GOAL, extra: 1 }, 'body/extra'],
    ] as const
    for (const [payload, path] of bad) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload })
      expect(res.statusCode, JSON.stringify(payload)).toBe(400)
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path)
    }
  })

  it('lists with ?status= and pages with a cursor', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const ids = [await createSession(t, a), await createSession(t, a), await createSession(t, a)]
    await t.app.inject({ method: 'PATCH', url: `/v1/sessions/${ids[1]}`, headers: a.headers, payload: { status: 'archived' } })
    const active = await t.app.inject({ method: 'GET', url: '/v1/sessions?status=active', headers: a.headers })
    expect(active.json().items.map((s: { id: string }) => s.id)).toEqual([ids[0], ids[2]])
    const archived = await t.app.inject({ method: 'GET', url: '/v1/sessions?status=archived', headers: a.headers })
    expect(archived.json().items.map((s: { id: string }) => s.id)).toEqual([ids[1]])
    const p1 = await t.app.inject({ method: 'GET', url: '/v1/sessions?limit=2', headers: a.headers })
    expect(p1.json().items).toHaveLength(2)
    expect(p1.json().next_cursor).toBe(ids[1])
    const p2 = await t.app.inject({ method: 'GET', url: `/v1/sessions?limit=2&cursor=${ids[1]}`, headers: a.headers })
    expect(p2.json()).toMatchObject({ items: [{ id: ids[2] }], next_cursor: null })
    const bad = await t.app.inject({ method: 'GET', url: '/v1/sessions?status=gone', headers: a.headers })
    expect(bad.statusCode).toBe(400)
  })

  it('an archived session is read-only (409) until unarchived; delete removes it with its log', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    expect((await postStep(t, a, id, RUN[0]!)).statusCode).toBe(201)
    const arch = await t.app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, headers: a.headers, payload: { status: 'archived' } })
    expect(arch.json().status).toBe('archived')
    // A read of the archived session first: the write after it must not go through a cached copy.
    expect((await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/recitation?iteration=1`, headers: a.headers })).statusCode).toBe(200)
    const step = await postStep(t, a, id, RUN[1]!)
    expect(step.statusCode).toBe(409)
    // Final until unarchived: no Retry-After invites a client to send it again.
    expect(step.headers['retry-after']).toBeUndefined()
    const goal = await t.app.inject({ method: 'PUT', url: `/v1/sessions/${id}/goal`, headers: a.headers, payload: { goal: 'x y z' } })
    expect(goal.statusCode).toBe(409)
    expect((await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/summary`, headers: a.headers })).statusCode).toBe(200)
    await t.app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, headers: a.headers, payload: { status: 'active' } })
    expect((await postStep(t, a, id, RUN[1]!)).json().step_number).toBe(2)
    expect((await t.app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, headers: a.headers, payload: {} })).statusCode).toBe(400)
    const del = await t.app.inject({ method: 'DELETE', url: `/v1/sessions/${id}`, headers: a.headers })
    expect(del.statusCode).toBe(204)
    expect((await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}`, headers: a.headers })).statusCode).toBe(404)
    expect(await t.db.get('SELECT count(*) AS n FROM steps')).toEqual({ n: 0 })
  })

  it("config.escalation 'seed', the former name of 'immediate', is accepted and read as 'immediate', also from a stored row", async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, config: { escalation: 'seed' } } })
    expect(res.statusCode).toBe(201)
    expect(res.json().config.escalation).toBe('immediate')
    const id = res.json().id as string
    const row = await t.db.get<{ config: string }>('SELECT config FROM sessions WHERE id = ?', [id])
    expect(JSON.parse(row!.config).escalation).toBe('immediate')
    // A row written before the rename.
    await t.db.run('UPDATE sessions SET config = ? WHERE id = ?', [row!.config.replace('"immediate"', '"seed"'), id])
    expect((await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}`, headers: a.headers })).json().config.escalation).toBe('immediate')
    const bad = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, config: { escalation: 'gentle' } } })
    expect(bad.statusCode).toBe(400)
  })

  it('honours Idempotency-Key on create', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const headers = { ...a.headers, 'idempotency-key': 'k-1' }
    const first = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { goal: GOAL } })
    const again = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { goal: GOAL } })
    expect(again.statusCode).toBe(201)
    expect(again.json().id).toBe(first.json().id)
    expect(again.headers['idempotent-replayed']).toBe('true')
    const other = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { goal: 'different' } })
    expect(other.statusCode).toBe(409)
    expect(await t.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 1 })
  })
})

describe('tenancy', () => {
  it("401 without a key, 404 for an unknown id and for another agent's session on every route", async () => {
    const t = await buildTestApp()
    const owner = await t.createAgent('owner')
    const other = await t.createAgent('other')
    const id = await createSession(t, owner)
    await postStep(t, owner, id, RUN[0]!)
    const before = await dumpTables(t)
    for (const r of SESSION_ROUTES) {
      const url = r.url.replace('{id}', id)
      const opts = r.payload === undefined ? {} : { payload: r.payload as object }
      const anon = await t.app.inject({ method: r.method, url, ...opts })
      expect(anon.statusCode, `${r.method} ${r.url} anonymous`).toBe(401)
      const foreign = await t.app.inject({ method: r.method, url, headers: other.headers, ...opts })
      expect(foreign.statusCode, `${r.method} ${r.url} other agent`).toBe(404)
      expect(foreign.json().type).toBe('urn:problem:not_found')
      const unknown = await t.app.inject({ method: r.method, url: r.url.replace('{id}', 'ses_0000000000unknown'), headers: owner.headers, ...opts })
      expect(unknown.statusCode, `${r.method} ${r.url} unknown`).toBe(404)
    }
    expect(await dumpTables(t)).toEqual(before)
    const list = await t.app.inject({ method: 'GET', url: '/v1/sessions', headers: other.headers })
    expect(list.json().items).toEqual([])
    // The owner reaches every route (delete last).
    for (const r of [...SESSION_ROUTES.filter((x) => x.method !== 'DELETE'), SESSION_ROUTES.find((x) => x.method === 'DELETE')!]) {
      const res = await t.app.inject({ method: r.method, url: r.url.replace('{id}', id), headers: owner.headers, ...(r.payload === undefined ? {} : { payload: r.payload as object }) })
      expect(res.statusCode, `${r.method} ${r.url} owner`).toBeLessThan(300)
      if (r.method === 'PATCH') await t.app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, headers: owner.headers, payload: { status: 'active' } })
    }
  })
})

describe('step verdicts', () => {
  it('an on-track run that drifts and loops: verdicts, drift episode events and metrics', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    await subscribeToEvents(t.db, a.id)
    const id = await createSession(t, a)
    const results = []
    for (const d of RUN) {
      const res = await postStep(t, a, id, d)
      expect(res.statusCode).toBe(201)
      results.push(res.json())
    }
    expect(results.map((r) => r.step_number)).toEqual([1, 2, 3, 4, 5, 6])
    // Graduated: the loop's first detection answers adjust, the drift past 0.6 replan.
    expect(results.map((r) => r.verification.recommended_action)).toEqual(['continue', 'continue', 'adjust', 'adjust', 'adjust', 'replan'])
    expect(results.map((r) => r.verification.aligned)).toEqual([true, true, false, false, false, false])
    expect(results[4].state.loop_detected).toBe(true)
    expect(results[4].verification.reasoning).toContain('loop')
    expect(results[1].state).toMatchObject({ current_step: 2, progress: 2 / 3 })
    // Drift rises once the agent leaves the goal.
    for (let i = 3; i < 6; i++) expect(results[i].state.drift_score).toBeGreaterThan(results[i - 1].state.drift_score)
    const drifting = results.map((r) => r.drift.drifting)
    expect(drifting.indexOf(true)).toBeGreaterThan(0)

    const events = (await t.db.all('SELECT event_type, payload FROM webhook_messages ORDER BY id')) as { event_type: string; payload: string }[]
    const types = events.map((e) => e.event_type)
    // Sustained drift began once: one event for the episode, however long it lasts.
    expect(types.filter((x) => x === 'session.drift_detected')).toHaveLength(1)
    expect(types.filter((x) => x === 'session.loop_detected')).toHaveLength(1)
    const drift = JSON.parse(events.find((e) => e.event_type === 'session.drift_detected')!.payload)
    expect(drift).toMatchObject({ type: 'session.drift_detected', data: { session_id: id, step_number: drifting.indexOf(true) + 1 } })

    // After a reset the next sustained drift is a new episode.
    await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/drift/reset`, headers: a.headers })
    for (let i = 0; i < 4; i++) await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/drift-checks`, headers: a.headers, payload: { action: `unrelated gardening chores ${i}` } })
    const again = await t.db.get("SELECT count(*) AS n FROM webhook_messages WHERE event_type = 'session.drift_detected'")
    expect(again).toEqual({ n: 2 })

    const log = await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/steps?limit=4`, headers: a.headers })
    expect(log.json().items.map((s: { description: string }) => s.description)).toEqual(RUN.slice(0, 4))
    expect(log.json().next_cursor).toBe('4')
    const rest = await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/steps?cursor=4`, headers: a.headers })
    expect(rest.json().items.map((s: { step_number: number }) => s.step_number)).toEqual([5, 6])
    expect(rest.json().items[0].verification).toEqual(results[4].verification)

    const summary = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/summary`, headers: a.headers })).json()
    expect(summary).toMatchObject({ goal: GOAL, steps_completed: 2, steps_planned: 3, verifications: 6, loops_detected: 1 })
    expect(summary.dna.total_checks).toBe(10)
    expect(Object.keys(summary).sort()).toEqual(
      ['avg_alignment', 'dna', 'drift', 'elapsed_seconds', 'goal', 'loops_detected', 'progress', 'reminders', 'stall_turns', 'steps_completed', 'steps_planned', 'verifications'].sort(),
    )

    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toMatch(/goalkeeper_step_verdicts_total\{action="continue"\} 2/)
    expect(metrics).toMatch(/goalkeeper_step_verdicts_total\{action="replan"\} 1/)
    expect(metrics).toMatch(/goalkeeper_step_verdicts_total\{action="adjust"\} 3/)
    expect(metrics).toMatch(/goalkeeper_drift_events_total\{severity="critical"\} \d+/)
  })

  it('loop reset clears the loop flag; a new plan puts the step counter back to 0', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    for (let i = 0; i < 3; i++) await postStep(t, a, id, 'design user schema')
    const reset = await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/loop/reset`, headers: a.headers })
    expect(reset.statusCode).toBe(200)
    expect(reset.json()).toMatchObject({ loop_detected: false, loop_count: 1 })
    const plan = await t.app.inject({ method: 'PUT', url: `/v1/sessions/${id}/plan`, headers: a.headers, payload: { steps: ['one', 'two'] } })
    expect(plan.json()).toMatchObject({ plan: ['one', 'two'], state: { current_step: 0, total_steps_planned: 2, progress: 0 } })
  })
})
