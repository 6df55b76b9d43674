import { describe, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'

/** Hook sessions' configuration (settings, the URL's query string), secrets kept out, and external ids on REST. */

const base = (session: string) => ({ session_id: session, transcript_path: '/tmp/t.jsonl', cwd: '/work/project' })

async function send(t: TestApp, agent: TestAgent, body: object, query = '') {
  const res = await t.app.inject({ method: 'POST', url: `/v1/hooks/claude-code${query}`, headers: agent.headers, payload: body })
  expect(res.statusCode, res.body).toBe(200)
  return res.json<Record<string, unknown>>()
}

async function hookSession(t: TestApp, agent: TestAgent, external: string) {
  const list = await t.app.inject({ url: `/v1/sessions?external_id=${external}`, headers: agent.headers })
  const session = list.json<{ items: { id: string; goal: string; config: Record<string, unknown> }[] }>().items[0]!
  const steps = await t.app.inject({ url: `/v1/sessions/${session.id}/steps`, headers: agent.headers })
  return { session, steps: steps.json<{ items: { description: string; output: string; tool: { args: Record<string, unknown> } }[] }>().items }
}

const SECRETS = [
  'sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789',
  'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  'AKIAIOSFODNN7EXAMPLE',
  'hunter2-Pa55',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC',
]

describe('hook settings and secrets', () => {
  it("configures hook sessions from the agent's session_defaults, overridden by the hook URL's query string", async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const bad = await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: a.headers, payload: { session_defaults: { full_cutoff: 9, compact_cutoff: 2 } } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json<{ errors: { path: string }[] }>().errors[0]!.path).toBe('body/session_defaults/compact_cutoff')
    const put = await t.app.inject({
      method: 'PUT',
      url: '/v1/settings',
      headers: a.headers,
      payload: { session_defaults: { budget: { cost_usd: 5 }, loop_exempt_tools: ['Task'] }, hooks: { max_stop_blocks: 1 } },
    })
    expect(put.statusCode, put.body).toBe(200)
    expect(put.json()).toMatchObject({ session_defaults: { budget: { cost_usd: 5 } }, hooks: { max_stop_blocks: 1, tool_output: 'store' } })

    await send(t, a, { ...base('s-1'), hook_event_name: 'UserPromptSubmit', prompt: 'Upgrade the parser to version 3' })
    expect((await hookSession(t, a, 's-1')).session.config).toMatchObject({ escalation: 'graduated', skip_unchanged: true, budget: { cost_usd: 5 }, loop_exempt_tools: ['Task'] })
    await send(t, a, { ...base('s-2'), hook_event_name: 'UserPromptSubmit', prompt: 'Upgrade the parser to version 3' }, '?escalation=seed&budget_tokens=5000&loop_exempt_tools=Bash,%20Read')
    // `seed`, the former name of `immediate`, is still accepted.
    expect((await hookSession(t, a, 's-2')).session.config).toMatchObject({ escalation: 'immediate', budget: { cost_usd: 5, tokens: 5000 }, loop_exempt_tools: ['Bash', 'Read'] })

    const badQuery = await t.app.inject({ method: 'POST', url: '/v1/hooks/claude-code?max_stop_blocks=99', headers: a.headers, payload: { ...base('s-3'), hook_event_name: 'Stop' } })
    expect(badQuery.statusCode).toBe(400)
    expect(badQuery.json<{ errors: { path: string }[] }>().errors[0]!.path).toBe('querystring/max_stop_blocks')
  })

  it('keeps planted secrets out of the goal, the tool arguments and the output, and stores only a digest when asked', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const [openai, github, aws, password, jwt, pem] = SECRETS
    await send(t, a, { ...base('sec'), hook_event_name: 'UserPromptSubmit', prompt: `Deploy with OPENAI_API_KEY=${openai} to staging` })
    await send(t, a, {
      ...base('sec'),
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: `curl -H "Authorization: Bearer ${github}" https://deploy:${password}@staging.example.com/api`, env: { AWS_ACCESS_KEY_ID: aws } },
      tool_response: { stdout: `token=${jwt}\n-----BEGIN PRIVATE KEY-----\n${pem}\n-----END PRIVATE KEY-----\ndeployed`, stderr: '' },
    })
    const { session, steps } = await hookSession(t, a, 'sec')
    const stored = JSON.stringify({ session, steps })
    for (const secret of SECRETS) expect(stored).not.toContain(secret)
    expect(session.goal).toBe('Deploy with OPENAI_API_KEY=[REDACTED] to staging')
    expect(steps[0]!.tool.args.command).toBe('curl -H "Authorization: Bearer [REDACTED]" https://deploy:[REDACTED]@staging.example.com/api')
    expect(steps[0]!.output).toContain('deployed')

    await t.app.inject({ method: 'PUT', url: '/v1/settings', headers: a.headers, payload: { hooks: { tool_output: 'digest' } } })
    const failure = { ...base('sec'), hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: { command: 'cat .env' }, error: `API_TOKEN=${openai}` }
    const answers = [await send(t, a, failure), await send(t, a, failure), await send(t, a, failure)]
    const after = await hookSession(t, a, 'sec')
    expect(after.steps.slice(1).map((s) => s.output)).toEqual(Array(3).fill(expect.stringMatching(/^sha256:[0-9a-f]{16}$/)))
    // Loop detection reads the digests: the third identical failure is a loop.
    expect(JSON.stringify(answers[2])).toContain('failed 3 times in a row')
  })

  it('gives sessions an external id on REST: unique per agent, filterable, another agent unaffected', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const b = await t.createAgent('b')
    const create = (agent: TestAgent, external_id: string) => t.app.inject({ method: 'POST', url: '/v1/sessions', headers: agent.headers, payload: { goal: 'Ship the release', external_id } })
    const first = await create(a, 'run-7')
    expect(first.statusCode).toBe(201)
    expect(first.json()).toMatchObject({ external_id: 'run-7' })
    const again = await create(a, 'run-7')
    expect(again.statusCode).toBe(409)
    expect((await create(b, 'run-7')).statusCode).toBe(201)
    expect((await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: 'x', external_id: '' } })).statusCode).toBe(400)
    const listed = await t.app.inject({ url: '/v1/sessions?external_id=run-7', headers: a.headers })
    expect(listed.json<{ items: { id: string }[] }>().items.map((s) => s.id)).toEqual([first.json<{ id: string }>().id])
    const overview = await t.app.inject({ url: '/v1/sessions/overview?external_id=run-7', headers: b.headers })
    expect(overview.json<{ items: unknown[] }>().items).toHaveLength(1)
    const plain = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: 'No external id' } })
    expect(plain.json()).toMatchObject({ external_id: null })
  })
})
