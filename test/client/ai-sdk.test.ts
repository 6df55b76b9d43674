/**
 * The AI SDK adapter in a real `generateText` tool loop: a scripted mock model (ai/test) that
 * starts on plan, then drifts and repeats itself, against a live goalkeeper on 127.0.0.1.
 */
import { generateText, stepCountIs, tool, type ModelMessage } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { goalkeeperAi } from '@goalkeeper/client/ai'
import { startJudge, judgeEnv, type Judge } from './judge.js'
import { GOAL, liveServer, PLAN } from './live-server.js'

/** A model that calls `work` with each action of the script in turn, then keeps repeating the last. */
function scriptedModel(script: string[]) {
  let call = 0
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      const action = script[Math.min(call, script.length - 1)]!
      call++
      return {
        content: [{ type: 'tool-call', toolCallId: `call_${call}`, toolName: 'work', input: JSON.stringify({ action }) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
        warnings: [],
      }
    },
  })
  return model
}

const tools = {
  work: tool({
    description: 'Do one piece of work',
    inputSchema: z.object({ action: z.string() }),
    execute: async ({ action }) => `done: ${action}`,
  }),
}

const DRIFT_SCRIPT = ['design the user schema', 'implement signup and login endpoints with JWT', 'browse cat pictures on reddit']

const systemTexts = (prompt: { role: string; content: unknown }[]) => prompt.filter((m) => m.role === 'system').map((m) => String(m.content))

describe('goalkeeperAi in a generateText loop', () => {
  let judge: Judge
  beforeAll(async () => {
    judge = await startJudge()
  })
  afterAll(() => judge.close())

  it('sees the verdicts change as the model drifts and loops, and stops the loop on replan', async () => {
    const { client } = await liveServer()
    const session = await client.sessions.create({ goal: GOAL, plan: PLAN, config: { recitation: { frequency: 2 } } })
    const model = scriptedModel(DRIFT_SCRIPT)
    const gk = goalkeeperAi({ client, sessionId: session.id, stopOn: ['abort', 'replan'] })

    const result = await generateText(gk.wrap({ model, tools, prompt: 'Start on the user management API.', stopWhen: stepCountIs(30) }))

    const actions = gk.guard.verdicts.map((v) => v.verification.recommended_action)
    // Graduated: drift answers adjust, the loop's first detection too, its continuation replan.
    expect(actions).toEqual(['continue', 'continue', 'adjust', 'adjust', 'adjust', 'replan'])
    expect(gk.guard.last?.state.loop_detected).toBe(true)
    expect(result.steps).toHaveLength(6) // stopped by goalkeeper, not by the 30-step bound
    // Each step was posted with its tool call and result.
    const log = await client.sessions.steps(session.id)
    expect(log.items[0]).toMatchObject({ description: 'work({"action":"design the user schema"})', output: 'work: done: design the user schema' })
    // …and the fields the loop kinds and budgets read: the call, whether it failed, the step's tokens.
    expect(log.items[0]).toMatchObject({ tool: { name: 'work', args: { action: 'design the user schema' } }, error: false, tokens: 15 })

    // The goal reminder went in only after the first non-continue verdict (model calls 4 to 6).
    const prompts = model.doGenerateCalls.map((c) => c.prompt)
    const withGoal = prompts.map((p) => systemTexts(p).some((t) => t.startsWith(`[GOAL: ${GOAL}]`)))
    expect(withGoal).toEqual([false, false, false, true, true, true])
    // The recitation block was due every second iteration: inserted before the user message.
    const recited = prompts.map((p) => p.findIndex((m) => m.role === 'system' && String(m.content).startsWith('[Current Status - Iteration')))
    expect(recited.map((i) => i >= 0)).toEqual([true, false, true, false, true, false])
    expect(prompts[0]![recited[0]! + 1]!.role).toBe('user')
  })

  it('stops on abort by default, keeping the caller’s own callbacks', async () => {
    const { client } = await liveServer({ env: judgeEnv(judge) })
    const session = await client.sessions.create({ goal: GOAL, plan: PLAN, config: { llm_verify: true } })
    const model = scriptedModel(['design the user schema', 'order a pizza for the user', 'order a pizza for the user'])
    const gk = goalkeeperAi({ client, sessionId: session.id })
    const seen: number[] = []
    const prepared: ModelMessage[][] = []

    const result = await generateText(
      gk.wrap({
        model,
        tools,
        prompt: 'Start on the user management API.',
        onStepFinish: (step) => void seen.push(step.toolCalls.length),
        prepareStep: ({ messages }) => void prepared.push(messages),
      }),
    )

    // The pizza loop: adjust while it drifts, replan twice as the loop goes on, then abort.
    expect(gk.guard.verdicts.map((v) => v.verification.recommended_action)).toEqual(['continue', 'adjust', 'adjust', 'adjust', 'replan', 'replan', 'abort'])
    expect(gk.guard.shouldStop).toBe(true)
    expect(result.steps).toHaveLength(7)
    expect(seen).toEqual([1, 1, 1, 1, 1, 1, 1])
    expect(prepared).toHaveLength(7)
  })
})
