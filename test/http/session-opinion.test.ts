import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'
import { sharedDatabase } from '../sessions/shared-database.js'
import { adviceFor } from '../../src/hooks/advice.js'
import { createSession, GOAL, postStep } from './sessions-fixtures.js'
import { fakeChat } from './fake-chat.js'

/** A stand-in OpenAI-compatible endpoint; the path picks the behaviour. */
let llm: Awaited<ReturnType<typeof fakeChat>>
let base = ''
const seen: { path: string; prompt: string; max_tokens: number }[] = []
const ANALYSIS = 'It rewrites the same schema again and again; write the auth endpoints next.'

beforeAll(async () => {
  llm = await fakeChat<{ messages: { content: string }[]; max_tokens: number }>(({ path, body, answer, res }) => {
    const prompt = body.messages[0]!.content
    seen.push({ path, prompt, max_tokens: body.max_tokens })
    const no = JSON.stringify({ progress: false, confidence: 0.95, analysis: ANALYSIS })
    if (path.startsWith('/no/')) return answer(no)
    // Confident at first, overruled by the confirming call.
    if (path.startsWith('/doubt/')) return answer(prompt.includes('A first review found') ? '{"progress": true, "confidence": 0.8, "analysis": "It is fine."}' : no)
    if (path.startsWith('/garbage/')) return answer('I cannot say.')
    if (path.startsWith('/broken/')) return res.writeHead(500).end('boom')
    if (path.startsWith('/slow/')) return void setTimeout(() => answer(no), 1500).unref()
    res.writeHead(404).end()
  })
  base = llm.base
})
afterAll(() => llm.close())

const env = (mode: string) => ({ GOALKEEPER_LLM_URL: `${base}/${mode}/v1`, GOALKEEPER_LLM_MODEL: 'stand-in', GOALKEEPER_LLM_TIMEOUT_MS: '300' })
const STEPS = [
  'design the user schema with email and password',
  'add a password hash column to the user schema',
  'rename the email column of the user schema',
  'design the user schema with email and password again',
  'implement login auth endpoints with JWT tokens',
  'write tests for the login endpoint',
  'implement the logout endpoint',
]

async function steps(t: TestApp, a: TestAgent, id: string, descriptions: string[]) {
  const out = []
  for (const d of descriptions) {
    const res = await postStep(t, a, id, d, 'done')
    expect(res.statusCode).toBe(201)
    out.push(res.json())
  }
  return out
}

it('a confirmed confident "no" answers replan with the analysis; the schedule goes on across a restart', async () => {
  const shared = await sharedDatabase()
  const first = await buildTestApp({ env: env('no'), handle: shared.open() })
  const a = await first.createAgent()
  const config = { second_opinion: { after: 3, every: 4 } }
  const id = await createSession(first, a, { goal: GOAL, config })
  const from = seen.length
  const [, , third] = await steps(first, a, id, STEPS.slice(0, 3))
  // Asked at step 3: once, and once more to confirm.
  expect(seen.slice(from).map((s) => s.path)).toEqual(['/no/v1/chat/completions', '/no/v1/chat/completions'])
  const [ask, confirm] = seen.slice(from)
  expect(ask!.prompt).toContain(`Goal: ${GOAL}`)
  expect(ask!.prompt).toContain(`1. ${STEPS[0]} -> done`)
  expect(ask!.prompt).toContain(`3. ${STEPS[2]} -> done`)
  expect(ask!.max_tokens).toBe(400)
  expect(confirm!.prompt).toContain(`A first review found it is not making progress: ${ANALYSIS}`)
  expect(third.verification.recommended_action).toBe('replan')
  expect(third.verification.second_opinion).toEqual({ progress: false, confidence: 0.95, analysis: ANALYSIS, confirmed: true })
  expect(third.verification.reasoning).toContain(ANALYSIS)
  expect(adviceFor(third)).toContain(`A review of your last steps finds no progress: ${ANALYSIS}`)
  const log = (await first.app.inject({ method: 'GET', url: `/v1/sessions/${id}/steps`, headers: a.headers })).json()
  expect(log.items[2].verification).toEqual(third.verification)
  // The same steps without a second opinion do not replan.
  const plain = await createSession(first, a, { goal: GOAL })
  expect((await steps(first, a, plain, STEPS.slice(0, 3)))[2].verification.recommended_action).not.toBe('replan')
  await first.app.close()
  await first.handle.close()

  // Restarted: the next opinion is due at step 7 (3 + 4), not at once.
  const second = await buildTestApp({ env: env('no'), handle: shared.open() })
  const before = seen.length
  const later = await steps(second, a, id, STEPS.slice(3, 7))
  expect(later.map((r) => r.verification.second_opinion === undefined)).toEqual([true, true, true, false])
  expect(seen.length - before).toBe(2)
  await second.app.close()
  await second.handle.close()
})

it('a "no" the second call does not confirm is reported, the verdict unchanged', async () => {
  const t = await buildTestApp({ env: env('doubt') })
  const a = await t.createAgent()
  const id = await createSession(t, a, { goal: GOAL, config: { second_opinion: { after: 2 } } })
  const plain = await createSession(t, a, { goal: GOAL })
  const [, asked] = await steps(t, a, id, STEPS.slice(0, 2))
  const [, without] = await steps(t, a, plain, STEPS.slice(0, 2))
  expect(asked.verification.second_opinion).toEqual({ progress: false, confidence: 0.95, analysis: ANALYSIS, confirmed: false })
  const { second_opinion: _, ...rest } = asked.verification
  expect(rest).toEqual(without.verification)
})

it.each(['broken', 'garbage', 'slow'])('a %s provider changes no verdict and fails no step', async (mode) => {
  const t = await buildTestApp({ env: env(mode) })
  const a = await t.createAgent()
  const id = await createSession(t, a, { goal: GOAL, config: { second_opinion: { after: 2, every: 2 } } })
  const plain = await createSession(t, a, { goal: GOAL })
  const from = seen.length
  const asked = await steps(t, a, id, STEPS.slice(0, 4))
  expect(seen.length - from).toBe(2)
  expect(asked.map((r) => r.verification)).toEqual((await steps(t, a, plain, STEPS.slice(0, 4))).map((r) => r.verification))
})

it('bad second_opinion config is a 400 naming the field; without an LLM configured, the variable', async () => {
  const withLlm = await buildTestApp({ env: env('no') })
  const a = await withLlm.createAgent()
  for (const [second_opinion, path] of [
    [{ after: 1 }, 'body/config/second_opinion/after'],
    [{ every: 1001 }, 'body/config/second_opinion/every'],
    [{ often: 3 }, 'body/config/second_opinion/often'],
  ] as const) {
    const res = await withLlm.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: GOAL, config: { second_opinion } } })
    expect(res.statusCode, JSON.stringify(second_opinion)).toBe(400)
    expect(JSON.stringify(res.json().errors)).toContain(path)
  }
  const t = await buildTestApp()
  const b = await t.createAgent()
  const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: b.headers, payload: { goal: GOAL, config: { second_opinion: {} } } })
  expect(res.statusCode).toBe(400)
  expect(res.json().detail).toContain('GOALKEEPER_LLM_URL')
  expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(['body/config/second_opinion'])
  expect(await t.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 0 })
})
