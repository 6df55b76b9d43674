import { describe, expect, it } from 'vitest'
import { codePointEnd, cutText } from '../../src/engine/similarity/text.js'
import { MAX_BODY_DEPTH, nestsDeeper } from '../../src/json-body.js'
import { TOOL_ARGS_LIMITS } from '../../src/sessions/detection-schemas.js'
import { METADATA_LIMITS } from '../../src/sessions/schemas.js'
import { buildTestApp, subscribeToEvents } from '../helpers.js'
import { createSession, GOAL, PLAN, postStep } from './sessions-fixtures.js'

const EMOJI = '\u{1F600}' // two UTF-16 units
const wellFormed = (body: string) => expect(body.isWellFormed() && !/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i.test(body), body.slice(0, 200)).toBe(true)

describe('text is cut between code points', () => {
  it('cutText and codePointEnd never leave half of a surrogate pair', () => {
    const text = `${'a'.repeat(199)}${EMOJI}b`
    expect(cutText(text, 200)).toBe('a'.repeat(199))
    expect(cutText(text, 201)).toBe(`${'a'.repeat(199)}${EMOJI}`)
    expect(cutText(text, 500)).toBe(text)
    expect(codePointEnd(EMOJI, 1)).toBe(0)
    expect(codePointEnd(EMOJI, 2)).toBe(2)
  })

  it('a step with an emoji across character 200 keeps every read of the session working, on either database', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    await subscribeToEvents(t.db, a.id)
    const id = await createSession(t, a, { goal: GOAL, plan: PLAN })
    // Off the goal (a drift event with its action text) and repeated (a loop event with the description).
    const description = `${'browse cat pictures on reddit '.repeat(7).slice(0, 199)}${EMOJI} and more`
    for (let i = 0; i < 4; i++) expect((await postStep(t, a, id, description)).statusCode).toBe(201)
    for (const url of ['/v1/sessions/overview', '/v1/sessions', `/v1/sessions/${id}`, `/v1/sessions/${id}/steps`, `/v1/sessions/${id}/drift/events`, `/v1/sessions/${id}/summary`]) {
      const res = await t.app.inject({ url, headers: a.headers })
      expect([url, res.statusCode]).toEqual([url, 200])
      wellFormed(res.body)
    }
    const events = await t.app.inject({ url: `/v1/sessions/${id}/drift/events`, headers: a.headers })
    expect(events.json().items[0].action_text).toBe(description.slice(0, 199))
    // The webhook messages hold the cut text too.
    const messages = await t.db.all<{ payload: string }>('SELECT payload FROM webhook_messages')
    expect(messages.length).toBeGreaterThan(0)
    for (const m of messages) wellFormed(m.payload)
  })
})

describe("a lone surrogate from a client is a 400 naming the field, as a NUL is (a step's text is mended)", () => {
  it('in a value or a key, in any body, stores nothing', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    const cases: [string, string, string][] = [
      ['/v1/sessions', '{"goal":"ship \\ud83d it"}', 'body/goal'],
      ['/v1/sessions', '{"goal":"g","metadata":{"note":"\\ude00"}}', 'body/metadata/note'],
      ['/v1/sessions', '{"goal":"g","metadata":{"a":{"\\ud83dx":1}}}', 'body/metadata/a/\ud83dx'],
      ['/v1/reminders', '{"title":"t\\ud800","trigger":{"type":"context","pattern":"deploy"}}', 'body/title'],
    ]
    for (const [url, payload, path] of cases) {
      const res = await t.app.inject({ method: 'POST', url, headers: { ...a.headers, 'content-type': 'application/json' }, payload })
      expect([url, res.statusCode]).toEqual([url, 400])
      expect(res.json().errors).toEqual([{ path, message: expect.stringMatching(/lone surrogate/) }])
    }
    expect(await t.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 1 })
    expect(await t.db.get('SELECT count(*) AS n FROM steps')).toEqual({ n: 0 })
    // What a step did or printed is recorded as it came, its broken text mended like a NUL.
    const step = await t.app.inject({
      method: 'POST',
      url: `/v1/sessions/${id}/steps`,
      headers: { ...a.headers, 'content-type': 'application/json' },
      payload: '{"description":"wrote it \\ud83d","tool":{"name":"edit","args":{"path":["\\udfff"]}}}',
    })
    expect(step.statusCode).toBe(201)
    const [logged] = (await t.app.inject({ url: `/v1/sessions/${id}/steps`, headers: a.headers })).json().items
    expect([logged.description, logged.tool.args.path[0]]).toEqual(['wrote it \ufffd', '\ufffd'])
    expect(await t.db.get('SELECT count(*) AS n FROM reminders')).toEqual({ n: 0 })
    // A whole pair is text like any other.
    const ok = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: { ...a.headers, 'content-type': 'application/json' }, payload: '{"goal":"ship \\ud83d\\ude00 it"}' })
    expect(ok.statusCode).toBe(201)
    expect(ok.json().goal).toBe(`ship ${EMOJI} it`)
  })
})

describe('a body nested past the depth limit is a 400, before anything walks it', () => {
  it('nestsDeeper counts brackets outside strings only', () => {
    expect(nestsDeeper('[[[]]]', 3)).toBe(false)
    expect(nestsDeeper('[[[[]]]]', 3)).toBe(true)
    expect(nestsDeeper('{"a":"[[[[[[\\"{{{{"}', 1)).toBe(false)
    expect(nestsDeeper('{"a":{"b":{}}}', 2)).toBe(true)
  })

  it('~4,100 levels (25 KB) on a stored field, a free-form one, an unknown route and /mcp', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`
    const deepArray = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`
    const json = { ...a.headers, 'content-type': 'application/json' }
    const requests: [string, string][] = [
      ['/v1/sessions', `{"goal":"g","metadata":${deep(4100)}}`],
      ['/v1/sessions', deepArray(4100)],
      [`/v1/sessions/${id}/recitation`, `{"iteration":1,"messages":[{"role":"user","content":${deepArray(4100)}}]}`],
      [`/v1/reminders/rem_x/complete`, deepArray(4100)],
      ['/v1/turns', `{"user_message":"hi","messages":[{"role":"user","content":${deep(MAX_BODY_DEPTH)}}]}`],
    ]
    for (const [url, payload] of requests) {
      const res = await t.app.inject({ method: 'POST', url, headers: json, payload })
      expect([url, res.statusCode, res.headers['content-type']]).toEqual([url, 400, expect.stringContaining('application/problem+json')])
      expect(res.json().errors).toEqual([{ path: 'body', message: expect.stringMatching(/levels deep/) }])
    }
    const mcp = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...json, accept: 'application/json, text/event-stream' },
      payload: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"start_goal_session","arguments":{"goal":"g","metadata":${deep(4100)}}}}`,
    })
    expect(mcp.statusCode).toBe(400)
    expect(await t.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 1 })
  })
})

describe('a stored JSON field has size, key and depth limits', () => {
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))
  const nested = (depth: number): unknown => (depth === 1 ? { leaf: 1 } : { a: nested(depth - 1) })
  const sized = (bytes: number) => ({ text: 'x'.repeat(bytes - '{"text":""}'.length) })

  it('metadata and tool args past a limit are a 400 naming the field; at the limit they are stored', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const id = await createSession(t, a)
    const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url, headers: a.headers, payload })
    const step = (args: unknown) => post(`/v1/sessions/${id}/steps`, { description: 'edit the file', tool: { name: 'edit', args } })
    const cases: [() => Promise<{ statusCode: number; json: () => { errors: unknown } }>, string, RegExp][] = [
      [() => post('/v1/sessions', { goal: 'g', metadata: keys(METADATA_LIMITS.keys + 1) }), 'body/metadata', /keys/],
      [() => post('/v1/sessions', { goal: 'g', metadata: { a: keys(300), b: keys(300) } }), 'body/metadata', /keys/],
      [() => post('/v1/sessions', { goal: 'g', metadata: nested(METADATA_LIMITS.depth + 1) }), 'body/metadata', /levels deep/],
      [() => post('/v1/sessions', { goal: 'g', metadata: sized(METADATA_LIMITS.bytes + 1) }), 'body/metadata', /bytes/],
      [() => t.app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, headers: a.headers, payload: { metadata: keys(60_000) } }), 'body/metadata', /keys/],
      [() => step(keys(TOOL_ARGS_LIMITS.keys + 1)), 'body/tool/args', /keys/],
      [() => step(nested(TOOL_ARGS_LIMITS.depth + 1)), 'body/tool/args', /levels deep/],
      [() => step(sized(TOOL_ARGS_LIMITS.bytes + 1)), 'body/tool/args', /bytes/],
    ]
    for (const [send, path, message] of cases) {
      const res = await send()
      expect([path, res.statusCode]).toEqual([path, 400])
      expect(res.json().errors).toEqual([{ path, message: expect.stringMatching(message) }])
    }
    expect(await t.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 1 })
    expect(await t.db.get('SELECT count(*) AS n FROM steps')).toEqual({ n: 0 })
    // At every limit at once, stored and read back as given (bytes count UTF-8: 'é' is two).
    // nested(d) holds d keys, one a level; `deep` is one more.
    const full = { ...keys(METADATA_LIMITS.keys - METADATA_LIMITS.depth), deep: nested(METADATA_LIMITS.depth - 1) }
    const atLimit = await post('/v1/sessions', { goal: 'g', metadata: full })
    expect(atLimit.statusCode, atLimit.body).toBe(201)
    expect(atLimit.json().metadata).toEqual(full)
    const twoByte = { text: 'é'.repeat((METADATA_LIMITS.bytes - 11) / 2 + 1) }
    expect((await post('/v1/sessions', { goal: 'g', metadata: twoByte })).statusCode).toBe(400)
    expect((await step(sized(TOOL_ARGS_LIMITS.bytes))).statusCode).toBe(201)
  })
})
