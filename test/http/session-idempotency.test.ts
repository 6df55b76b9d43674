import { describe, expect, it, vi } from 'vitest'
import { backend, buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { createSession, RUN } from './sessions-fixtures.js'

const count = async (t: TestApp, table: string) => (await t.db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n

function post(t: TestApp, agent: TestAgent, url: string, payload: object, key?: string) {
  return t.app.inject({ method: 'POST', url, headers: { ...agent.headers, ...(key === undefined ? {} : { 'idempotency-key': key }) }, payload })
}

async function summary(t: TestApp, agent: TestAgent, id: string) {
  return (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/summary`, headers: agent.headers })).json()
}

describe('Idempotency-Key on POST /v1/sessions/{id}/steps', () => {
  it('replays the first response byte for byte and records the step once', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    const url = `/v1/sessions/${id}/steps`
    const first = await post(t, a, url, { description: RUN[0]! }, 'step-1')
    expect(first.statusCode).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const again = await post(t, a, url, { description: RUN[0]! }, 'step-1')
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body).toBe(first.body)
    expect(again.json().step_number).toBe(1)
    expect(await count(t, 'steps')).toBe(1)
    expect((await summary(t, a, id)).verifications).toBe(1)

    // A different body with the same key is refused, as on the other create routes; nothing moves.
    const other = await post(t, a, url, { description: RUN[1]! }, 'step-1')
    expect(other.statusCode).toBe(409)
    // Final: sending it again would get the same answer, so no Retry-After invites a repeat.
    expect(other.headers['retry-after']).toBeUndefined()
    expect(await count(t, 'steps')).toBe(1)
    // A new key is a new step.
    const next = await post(t, a, url, { description: RUN[1]! }, 'step-2')
    expect(next.json().step_number).toBe(2)
    expect((await summary(t, a, id)).verifications).toBe(2)
  })

  it('keeps keys per agent', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent('a')
    const b = await t.createAgent('b')
    const ida = await createSession(t, a)
    const idb = await createSession(t, b)
    expect((await post(t, a, `/v1/sessions/${ida}/steps`, { description: RUN[0]! }, 'same')).statusCode).toBe(201)
    // Same key, other agent, other session: independent, not a conflict.
    const fromB = await post(t, b, `/v1/sessions/${idb}/steps`, { description: RUN[0]! }, 'same')
    expect(fromB.statusCode).toBe(201)
    expect(fromB.headers['idempotent-replayed']).toBeUndefined()
    expect(fromB.json().step_number).toBe(1)
    expect(await count(t, 'steps')).toBe(2)
    // Another agent replaying a key against a session it does not own still gets a 404.
    expect((await post(t, b, `/v1/sessions/${ida}/steps`, { description: RUN[0]! }, 'fresh')).statusCode).toBe(404)
  })

  const breakers: Array<[string, (t: TestApp) => { mockRestore(): void }]> = [
    // The group commit's COMMIT fails: every write of the batch is gone (SQLite's group commit only).
    ...(backend === 'postgres'
      ? []
      : [
          [
            'the group commit fails',
            (t: TestApp) => {
              const db = t.sqlite
              const exec = db.exec.bind(db)
              let failNext = true
              return vi.spyOn(db, 'exec').mockImplementation((sql: string) => {
                if (sql === 'COMMIT' && failNext) {
                  failNext = false
                  throw new Error('disk I/O error')
                }
                return exec(sql)
              })
            },
          ] as [string, (t: TestApp) => { mockRestore(): void }],
        ]),
    // The record is the last write of the step's savepoint: its failure takes the step with it.
    [
      'the record cannot be written',
      (t: TestApp) =>
        vi.spyOn(t.app.services.idempotency, 'save').mockImplementationOnce(() => {
          throw new Error('disk I/O error')
        }),
    ],
  ]
  it.each(breakers)('records nothing when %s, so a retry with the key runs the step once', async (_what, breakIt) => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    const url = `/v1/sessions/${id}/steps`
    const spy = breakIt(t)
    const failed = await post(t, a, url, { description: RUN[0]! }, 'retry-me')
    spy.mockRestore()
    expect(failed.statusCode).toBe(500)
    expect(await count(t, 'steps')).toBe(0)
    expect(await count(t, 'idempotency_keys')).toBe(0)
    const retried = await post(t, a, url, { description: RUN[0]! }, 'retry-me')
    expect(retried.statusCode).toBe(201)
    expect(retried.headers['idempotent-replayed']).toBeUndefined()
    // The cached engine rolled back too: the retry is step 1.
    expect(retried.json().step_number).toBe(1)
    const replay = await post(t, a, url, { description: RUN[0]! }, 'retry-me')
    expect(replay.body).toBe(retried.body)
    expect(await count(t, 'steps')).toBe(1)
  })

  it('costs nothing without the header: no record is written', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    const save = vi.spyOn(t.app.services.idempotency, 'save')
    const lookup = vi.spyOn(t.app.services.idempotency, 'lookup')
    expect((await post(t, a, `/v1/sessions/${id}/steps`, { description: RUN[0]! })).statusCode).toBe(201)
    expect((await post(t, a, `/v1/sessions/${id}/drift-checks`, { action: RUN[0]! })).statusCode).toBe(200)
    expect(save).not.toHaveBeenCalled()
    expect(lookup).not.toHaveBeenCalled()
    expect(await count(t, 'idempotency_keys')).toBe(0)
  })
})

describe('Idempotency-Key on POST /v1/sessions/{id}/drift-checks', () => {
  it('replays the first 200 and records the check (and its drift event) once', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    const url = `/v1/sessions/${id}/drift-checks`
    const body = { action: 'browse cat pictures on reddit' }
    const first = await post(t, a, url, body, 'dc-1')
    expect(first.statusCode).toBe(200)
    expect(first.json().event).not.toBeNull()
    const again = await post(t, a, url, body, 'dc-1')
    expect(again.statusCode).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body).toBe(first.body)
    expect(await count(t, 'drift_events')).toBe(1)
    expect((await summary(t, a, id)).dna.total_checks).toBe(1)
    expect((await post(t, a, url, { action: 'something else' }, 'dc-1')).statusCode).toBe(409)
    expect((await summary(t, a, id)).dna.total_checks).toBe(1)
  })
})

describe('Idempotency-Key on creates', () => {
  it.each([
    ['/v1/sessions', { goal: 'Ship the billing export with tests' }, 'sessions'],
    ['/v1/reminders', { title: 'Stand-up', trigger: { type: 'scheduled', at: '2030-01-01T09:00:00Z' } }, 'reminders'],
    // An IP literal needs no DNS; loopback is allowed for this app. Nothing is delivered.
    ['/v1/webhooks', { url: 'http://127.0.0.1:9/hook' }, 'webhooks'],
  ])('POST %s stores its record in the create’s own transaction', async (url, body, table) => {
    const t = await buildTestApp({ env: { GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } })
    const a = await t.createAgent()
    const spy = vi.spyOn(t.app.services.idempotency, 'save').mockImplementationOnce(() => {
      throw new Error('no space')
    })
    const failed = await post(t, a, url, body, 'create-1')
    spy.mockRestore()
    expect(failed.statusCode).toBe(500)
    // Nothing was created without its record, so the retry creates exactly once.
    expect(await count(t, table)).toBe(0)
    const first = await post(t, a, url, body, 'create-1')
    expect(first.statusCode).toBe(201)
    const again = await post(t, a, url, body, 'create-1')
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body).toBe(first.body)
    expect(await count(t, table)).toBe(1)
  })
})
