import { describe, expect, it } from 'vitest'
import { buildTestApp, type TestAgent, type TestApp } from '../helpers.js'

/**
 * POST /v1/hooks/codex and /v1/hooks/gemini-cli with the event JSON each CLI's command hooks send
 * (test/hooks/README.md: Codex CLI 0.171.0, Gemini CLI 0.61.0, recorded against fake models).
 */

type Answer = { decision?: string; reason?: string; hookSpecificOutput?: { hookEventName: string; additionalContext?: string; permissionDecision?: string; permissionDecisionReason?: string } }

function hook(t: TestApp, agent: TestAgent, client: 'codex' | 'gemini-cli') {
  return async (body: Record<string, unknown>): Promise<Answer> => {
    const res = await t.app.inject({ method: 'POST', url: `/v1/hooks/${client}`, headers: agent.headers, payload: body })
    expect(res.statusCode, res.body).toBe(200)
    return res.json<Answer>()
  }
}

describe('Codex CLI hooks', () => {
  const base = { session_id: '019a4b2c-0000-7000-8000-000000000001', transcript_path: '/home/dev/.codex/sessions/r.jsonl', cwd: '/home/dev/api', turn_id: '1' }
  const exec = (command: string, tool_response?: string) => ({
    ...base,
    hook_event_name: tool_response === undefined ? 'PreToolUse' : 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: 'call_1',
    ...(tool_response === undefined ? {} : { tool_response }),
  })

  it('opens the session at the first prompt, records exec calls, advises on a loop and denies a call that continues it after replan', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const send = hook(t, a, 'codex')
    expect(await send({ ...base, hook_event_name: 'SessionStart', source: 'startup', model: 'gpt-5-codex', permission_mode: 'never' })).toEqual({})
    expect(await send({ ...base, hook_event_name: 'UserPromptSubmit', prompt: 'Make the CSV export in src/export.ts stream rows' })).toEqual({})
    const answers = []
    for (let i = 0; i < 4; i++) answers.push(await send(exec('npm test -- export', 'FAIL src/export.test.ts\n  expected stream, got string')))
    expect(answers[0]).toEqual({})
    expect(answers[2]!.hookSpecificOutput).toMatchObject({ hookEventName: 'PostToolUse' })
    expect(answers[2]!.hookSpecificOutput!.additionalContext).toContain('goalkeeper (step 3, adjust)')
    expect(answers[3]!.hookSpecificOutput!.additionalContext).toContain('replan')
    const denied = await send(exec('npm test -- export'))
    expect(denied.hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' })
    const list = await t.app.inject({ url: `/v1/sessions?external_id=${base.session_id}`, headers: a.headers })
    expect(list.json<{ items: { metadata: object }[] }>().items[0]!.metadata).toEqual({ source: 'codex' })
  })

  it('asks a stopping agent to finish its update_plan items, and stops asking at the cap (Codex has none of its own)', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const send = hook(t, a, 'codex')
    await send({ ...base, hook_event_name: 'UserPromptSubmit', prompt: 'Make the CSV export in src/export.ts stream rows' })
    await send({
      ...base,
      hook_event_name: 'PostToolUse',
      tool_name: 'update_plan',
      tool_input: {
        plan: [
          { step: 'Stream rows from the cursor', status: 'completed' },
          { step: 'Update the export test', status: 'pending' },
        ],
      },
      tool_response: 'Plan updated',
    })
    const stops = []
    for (let i = 0; i < 5; i++) stops.push(await send({ ...base, hook_event_name: 'Stop', stop_hook_active: i > 0, last_assistant_message: 'Done.' }))
    expect(stops.map((s) => s.decision ?? null)).toEqual(['block', 'block', 'block', null, null])
    expect(stops[0]!.reason).toContain('1. Update the export test')
  })
})

describe('Gemini CLI hooks', () => {
  const base = { session_id: '6a0f3c2e-0000-4000-8000-000000000002', transcript_path: '/home/dev/.gemini/tmp/c.json', cwd: '/home/dev/api', timestamp: '2026-11-27T09:00:00.000Z' }
  const shell = (command: string, exit?: number) => ({
    ...base,
    hook_event_name: exit === undefined ? 'BeforeTool' : 'AfterTool',
    tool_name: 'run_shell_command',
    tool_input: { command, description: 'Run the tests' },
    ...(exit === undefined ? {} : { tool_response: { llmContent: `Command: ${command}\nDirectory: (root)\nOutput: 1 failing\nError: (none)\nExit Code: ${exit}`, returnDisplay: '1 failing' } }),
  })

  it('reads a failed shell command from its exit code, answers with context, denies and blocks in its own format', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const send = hook(t, a, 'gemini-cli')
    expect(await send({ ...base, hook_event_name: 'BeforeAgent', prompt: 'Add pagination to GET /orders in src/orders.ts with a cursor' })).toEqual({})
    expect(await send(shell('npm test -- orders', 0))).toEqual({})
    const after = []
    for (let i = 0; i < 3; i++) after.push(await send(shell('npm run lint -- src/orders.ts', 1)))
    expect(after[2]!.hookSpecificOutput).toMatchObject({ hookEventName: 'AfterTool' })
    expect(after[2]!.hookSpecificOutput!.additionalContext).toContain('failed 3 times in a row')
    const list = await t.app.inject({ url: `/v1/sessions?external_id=${base.session_id}`, headers: a.headers })
    const id = list.json<{ items: { id: string }[] }>().items[0]!.id
    const steps = (await t.app.inject({ url: `/v1/sessions/${id}/steps`, headers: a.headers })).json<{ items: { error: boolean; description: string }[] }>().items
    expect(steps.map((s) => [s.description, s.error])).toEqual([['run_shell_command: npm test -- orders', false], ...Array(3).fill(['run_shell_command: npm run lint -- src/orders.ts', true])])

    // A fourth failure is a replan; trying it again is denied in Gemini CLI's shape.
    await send(shell('npm run lint -- src/orders.ts', 1))
    expect(await send(shell('npm run lint -- src/orders.ts'))).toEqual({ decision: 'deny', reason: expect.stringContaining('already told to replan') })

    await send({
      ...base,
      hook_event_name: 'AfterTool',
      tool_name: 'write_todos',
      tool_input: { todos: [{ description: 'Fix the lint errors', status: 'in_progress' }] },
      tool_response: { llmContent: 'ok' },
    })
    expect(await send({ ...base, hook_event_name: 'AfterAgent', prompt: 'x', prompt_response: 'Done', stop_hook_active: false })).toEqual({
      decision: 'block',
      reason: expect.stringContaining('1. Fix the lint errors'),
    })
    // PreCompress comes before every model call here: no effect.
    expect(await send({ ...base, hook_event_name: 'PreCompress', trigger: 'auto' })).toEqual({})
  })
})
