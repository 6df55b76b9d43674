/**
 * The Agents SDK adapter in a real Runner loop: a scripted Model (the SDK's own Model interface,
 * no network) that calls a tool on plan, then drifts, against a live goalkeeper on 127.0.0.1.
 */
import { Agent, Runner, tool, ToolCallError, ToolInputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered, Usage, type Model, type ModelRequest, type ModelResponse } from '@openai/agents'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { goalkeeperAgents } from '@goalkeeper/client/openai-agents'
import { startJudge, judgeEnv, type Judge } from './judge.js'
import { GOAL, liveServer, PLAN } from './live-server.js'

/** Calls `work` with each scripted action in turn; `null` ends with a text answer. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = []
  private readonly script: (string | null)[]
  constructor(script: (string | null)[]) {
    this.script = script
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request)
    const n = this.requests.length
    const action = this.script[Math.min(n - 1, this.script.length - 1)]
    const usage = new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 })
    if (action === null || action === undefined) {
      return { usage, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'All done.' }] }] }
    }
    return { usage, output: [{ type: 'function_call', callId: `call_${n}`, name: 'work', arguments: JSON.stringify({ action }), status: 'completed' }] }
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not used')
  }
}

const work = tool({
  name: 'work',
  description: 'Do one piece of work',
  parameters: z.object({ action: z.string() }),
  execute: async ({ action }) => `done: ${action}`,
})

const systemTexts = (request: ModelRequest) =>
  (Array.isArray(request.input) ? request.input : []).flatMap((item) => ('role' in item && item.role === 'system' && typeof item.content === 'string' ? [item.content] : []))

describe('goalkeeperAgents in a Runner loop', () => {
  let judge: Judge
  beforeAll(async () => {
    judge = await startJudge()
  })
  afterAll(() => judge.close())

  it('posts each tool call, sees the verdicts turn, and trips the tool guardrail on replan', async () => {
    const { client } = await liveServer()
    const session = await client.sessions.create({ goal: GOAL, plan: PLAN, config: { recitation: { frequency: 2 } } })
    const model = new ScriptedModel(['design the user schema', 'implement signup and login endpoints with JWT', 'browse cat pictures on reddit'])
    const gk = goalkeeperAgents({ client, sessionId: session.id, stopOn: ['abort', 'replan'] })
    const agent = new Agent({ name: 'builder', instructions: 'Build the API.', model, tools: gk.guardTools([work]), outputGuardrails: [gk.outputGuardrail] })
    const runner = gk.attach(new Runner({ tracingDisabled: true }))

    const err = await runner.run(agent, 'Start on the user management API.', { ...gk.runOptions, maxTurns: 30 }).catch((e: unknown) => e)

    // The SDK wraps a tool guardrail's tripwire in the ToolCallError of the refused call.
    expect(err).toBeInstanceOf(ToolCallError)
    const tripped = (err as ToolCallError).error
    expect(tripped).toBeInstanceOf(ToolInputGuardrailTripwireTriggered)
    expect((tripped as ToolInputGuardrailTripwireTriggered).result.output.outputInfo).toMatchObject({ session_id: session.id, verdict: { recommended_action: 'replan' } })
    await gk.guard.settled()
    expect(gk.guard.verdicts.map((v) => v.verification.recommended_action)).toEqual(['continue', 'continue', 'adjust', 'adjust', 'adjust', 'replan'])
    // The seventh tool call was refused before it ran: six steps recorded, seven model calls.
    expect(model.requests).toHaveLength(7)
    const log = await client.sessions.steps(session.id)
    expect(log.items).toHaveLength(6)
    expect(log.items[0]).toMatchObject({
      description: 'work({"action":"design the user schema"})',
      output: 'done: design the user schema',
      tool: { name: 'work', args: { action: 'design the user schema' } },
    })
    // Guidance: the recitation every second model call, the goal reminder after the first drift.
    const texts = model.requests.map(systemTexts)
    expect(texts.map((t) => t.some((x) => x.startsWith('[Current Status - Iteration')))).toEqual([true, false, true, false, true, false, true])
    expect(texts.map((t) => t.some((x) => x.startsWith(`[GOAL: ${GOAL}]`)))).toEqual([false, false, false, true, true, true, true])
  })

  it('trips on abort (the default), and the output guardrail refuses a final answer after it', async () => {
    const { client } = await liveServer({ env: judgeEnv(judge) })
    const session = await client.sessions.create({ goal: GOAL, plan: PLAN, config: { llm_verify: true } })
    // One pizza order after another: a loop that goes on past its replans.
    const model = new ScriptedModel(['design the user schema', ...Array<string>(6).fill('order a pizza for the user'), null])
    const gk = goalkeeperAgents({ client, sessionId: session.id })
    const agent = new Agent({ name: 'builder', instructions: 'Build the API.', model, tools: gk.guardTools([work]), outputGuardrails: [gk.outputGuardrail] })
    const runner = gk.attach(new Runner({ tracingDisabled: true }))

    const err = await runner.run(agent, 'Start on the user management API.', gk.runOptions).catch((e: unknown) => e)

    expect(err).toBeInstanceOf(OutputGuardrailTripwireTriggered)
    expect(gk.guard.verdicts.map((v) => v.verification.recommended_action)).toEqual(['continue', 'adjust', 'adjust', 'adjust', 'replan', 'replan', 'abort'])
    gk.detach(runner)
  })

  it('lets an on-goal run finish', async () => {
    const { client } = await liveServer()
    const session = await client.sessions.create({ goal: GOAL, plan: PLAN })
    const model = new ScriptedModel(['design the user schema', 'implement signup and login endpoints with JWT', null])
    const gk = goalkeeperAgents({ client, sessionId: session.id })
    const agent = new Agent({ name: 'builder', instructions: 'Build the API.', model, tools: gk.guardTools([work]), outputGuardrails: [gk.outputGuardrail] })
    const result = await gk.attach(new Runner({ tracingDisabled: true })).run(agent, 'Start.', gk.runOptions)
    expect(result.finalOutput).toBe('All done.')
    expect(gk.guard.verdicts.map((v) => v.verification.recommended_action)).toEqual(['continue', 'continue'])
  })
})
