import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { journalEntries } from '../sessions/journal-rows.js'
import { createSession, GOAL, postStep, RUN } from './sessions-fixtures.js'

const dir = mkdtempSync(join(tmpdir(), 'gk-replay-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const clock = () => Date.UTC(2026, 10, 22, 9)

for (const similarity of ['lexical', 'enhanced'] as const) {
  it(`a restart replays ${similarity} checks with the scores they recorded, not with whatever the scorer says now`, async () => {
    const file = join(dir, `${similarity}.db`)
    const first = await buildTestApp({ env: { GOALKEEPER_DB: file }, clock })
    const agent = await first.createAgent()
    const id = await createSession(first, agent, { goal: GOAL, config: { similarity } })
    for (const d of RUN.slice(0, 2)) expect((await postStep(first, agent, id, d)).statusCode).toBe(201)
    const check = await first.app.inject({ method: 'POST', url: `/v1/sessions/${id}/drift-checks`, headers: agent.headers, payload: { action: RUN[0] } })
    expect(journalEntries(first.handle.sqlite, id)).toBe(3)
    const op = first.handle.sqlite.prepare("SELECT op ->> '$.similarity' AS s FROM session_ops WHERE session_id = ?").get(id) as { s: number }
    expect(op.s).toBe(check.json().similarity)
    await first.app.close()

    // Stand-in for a scorer that changed since: what was recorded is what the session saw.
    first.handle.sqlite.prepare("UPDATE steps SET drift = json_set(drift, '$.similarity', 0.0) WHERE session_id = ?").run(id)
    first.handle.sqlite.prepare("UPDATE session_ops SET op = json_set(op, '$.similarity', 0.0) WHERE session_id = ?").run(id)
    first.handle.close()

    const second = await buildTestApp({ env: { GOALKEEPER_DB: file }, clock })
    const trend = (await second.app.inject({ method: 'GET', url: `/v1/sessions/${id}/drift/trend?window=10`, headers: agent.headers })).json()
    expect(trend).toMatchObject({ average_similarity: 0, consecutive_drifts: 3, total_drift_events: 3 })
  })
}
