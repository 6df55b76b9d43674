import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest'
import { SessionRepository } from '../../src/sessions/repository.js'
import { WRITE_ATTEMPTS } from '../../src/sessions/store.js'
import { buildTestApp } from '../helpers.js'
import { createSession, GOAL, postStep } from './sessions-fixtures.js'
import { fakeChat } from './fake-chat.js'

afterEach(() => vi.restoreAllMocks())

/** A stand-in OpenAI-compatible endpoint; the path picks the behaviour. */
let llm: Awaited<ReturnType<typeof fakeChat>>
let base = ''
const seen: { path: string; body: { model: string; messages: { content: string }[] } }[] = []
/** Answers of `/held/` requests, sent when the test says so. */
const held: Array<() => void> = []

beforeAll(async () => {
  llm = await fakeChat<{ model: string; messages: { content: string }[] }>(({ path, body, answer, res }) => {
    seen.push({ path, body })
    if (path.startsWith('/fast/')) return answer('{"score": 0.9, "reasoning": "advances the goal"}')
    if (path.startsWith('/held/')) return void held.push(() => answer('{"score": 0.9, "reasoning": "advances the goal"}'))
    if (path.startsWith('/garbage/')) return answer('I cannot say.')
    if (path.startsWith('/broken/')) return res.writeHead(500).end('boom')
    if (path.startsWith('/slow/')) return void setTimeout(() => answer('{"score": 1}'), 4000).unref()
    res.writeHead(404).end()
  })
  base = llm.base
})
afterAll(() => llm.close())

// The timeout leaves a loaded machine time to reach the fake; the slow answer comes well after it.
async function stepWith(mode: string, llm_verify = true) {
  const t = await buildTestApp({ env: { GOALKEEPER_LLM_URL: `${base}/${mode}/v1`, GOALKEEPER_LLM_MODEL: 'stand-in', GOALKEEPER_LLM_TIMEOUT_MS: '1500' } })
  const a = await t.createAgent()
  const id = await createSession(t, a, { goal: GOAL, config: { llm_verify } })
  const started = Date.now()
  const res = await postStep(t, a, id, 'browse cat pictures on reddit', 'lots of cats')
  expect(res.statusCode).toBe(201)
  return { result: res.json(), ms: Date.now() - started, t, a, id }
}

it('blends 0.7 × LLM + 0.3 × heuristic when the heuristic is unsure', async () => {
  const { result, t, a, id } = await stepWith('fast')
  const last = seen[seen.length - 1]!
  expect(last.path).toBe('/fast/v1/chat/completions')
  expect(last.body.model).toBe('stand-in')
  expect(last.body.messages[0]!.content).toContain(`Goal: ${GOAL}`)
  expect(result.verification.alignment_score).toBeCloseTo(0.7 * 0.9 + 0.3 * 0.15, 10)
  expect(result.verification.reasoning).toContain('LLM score 0.90')
  // The verified step is persisted like any other.
  const log = (await t.app.inject({ method: 'GET', url: `/v1/sessions/${id}/steps`, headers: a.headers })).json()
  expect(log.items[0].verification).toEqual(result.verification)
})

it.each([
  ['garbage', 'no usable score'],
  ['broken', 'LLM verification failed'],
  ['slow', 'timed out after 1500 ms'],
])('a %s LLM never fails the step: heuristic kept, noted in reasoning', async (mode, note) => {
  const { result, ms } = await stepWith(mode)
  expect(result.verification.alignment_score).toBeCloseTo(0.15, 10)
  expect(result.verification.reasoning).toContain(note)
  if (mode === 'slow') expect(ms).toBeLessThan(3800)
})

it('is not asked unless the session turns llm_verify on', async () => {
  const before = seen.length
  const { result } = await stepWith('fast', false)
  expect(seen.length).toBe(before)
  expect(result.verification.reasoning).not.toContain('LLM')
})

it('replays a keyed LLM-verified step without asking the LLM again, and refuses a concurrent duplicate', async () => {
  const t = await buildTestApp({ env: { GOALKEEPER_LLM_URL: `${base}/held/v1`, GOALKEEPER_LLM_MODEL: 'stand-in', GOALKEEPER_LLM_TIMEOUT_MS: '5000' } })
  const a = await t.createAgent()
  const id = await createSession(t, a, { goal: GOAL, config: { llm_verify: true } })
  const send = () => t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: { ...a.headers, 'idempotency-key': 'llm-1' }, payload: { description: 'write the schema' } })
  const calls = seen.length
  // The first awaits the LLM outside any transaction: the second arrives while it is in flight.
  const first = send()
  while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  const duplicate = await send()
  expect(duplicate.statusCode).toBe(409)
  // Sending it again resolves it (a replay once the first is done): the 409 says when.
  expect(duplicate.headers['retry-after']).toBe('1')
  // Another request under the key in flight is refused for good, as after the first has finished.
  const other = await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: { ...a.headers, 'idempotency-key': 'llm-1' }, payload: { description: 'something else' } })
  expect(other.statusCode).toBe(409)
  expect(other.headers['retry-after']).toBeUndefined()
  held.splice(0).forEach((go) => go())
  const done = await first
  expect(done.statusCode).toBe(201)
  const replay = await send()
  expect(replay.headers['idempotent-replayed']).toBe('true')
  expect(replay.body).toBe(done.body)
  expect(seen.length).toBe(calls + 1)
  expect(await t.db.get('SELECT count(*) AS n FROM steps')).toEqual({ n: 1 })
})

it('a session cannot turn llm_verify on without an LLM configured (400 naming the variable); off is fine', async () => {
  const t = await buildTestApp()
  const a = await t.createAgent()
  const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, config: { llm_verify: true } } })
  expect(res.statusCode).toBe(400)
  expect(res.headers['content-type']).toContain('application/problem+json')
  expect(res.json().detail).toContain('GOALKEEPER_LLM_URL')
  expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(['body/config/llm_verify'])
  expect(await t.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 0 })
  await createSession(t, a, { goal: GOAL, config: { llm_verify: false } })
})

it('an LLM-verified step that loses its version race runs again on a fresh copy; one that loses WRITE_ATTEMPTS times answers 409 with Retry-After', async () => {
  const t = await buildTestApp({ env: { GOALKEEPER_LLM_URL: `${base}/fast/v1`, GOALKEEPER_LLM_MODEL: 'stand-in', GOALKEEPER_LLM_TIMEOUT_MS: '1500' } })
  const a = await t.createAgent()
  const id = await createSession(t, a, { goal: GOAL, config: { llm_verify: true } })
  const post = (description: string) => t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: a.headers, payload: { description } })
  // The copy is written as a snapshot, checked against the version it was loaded at.
  const lose = vi.spyOn(SessionRepository.prototype, 'writeState').mockResolvedValueOnce(false)
  const asked = seen.length
  const won = await post('design the user schema')
  expect(won.statusCode).toBe(201)
  expect(won.json().step_number).toBe(1)
  expect(lose).toHaveBeenCalledTimes(2)
  // Each attempt asked the LLM on its own copy.
  expect(seen.length - asked).toBe(2)
  lose.mockResolvedValue(false)
  const lost = await post('implement auth endpoints')
  expect([lost.statusCode, lost.headers['retry-after']]).toEqual([409, '1'])
  expect(lose).toHaveBeenCalledTimes(2 + WRITE_ATTEMPTS)
  lose.mockRestore()
  expect((await post('implement auth endpoints')).json().step_number).toBe(2)
})
