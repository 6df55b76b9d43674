// An OpenAI Agents SDK run kept on its goal by goalkeeper (@goalkeeper/client/openai-agents).
//   GOALKEEPER_API_KEY=gk_… npm run example:agents    (GOALKEEPER_URL, default http://127.0.0.1:8080)
// With OPENAI_BASE_URL and OPENAI_API_KEY set (any OpenAI-compatible endpoint; OPENAI_MODEL,
// default gpt-4o-mini) a real model drives the run; without them a scripted mock model starts on
// plan, then drifts and repeats itself, and goalkeeper's guardrail trips.
import { Agent, OpenAIProvider, Runner, tool, ToolCallError, Usage, type Model, type ModelResponse } from '@openai/agents'
import { z } from 'zod'
import { Goalkeeper } from '@goalkeeper/client'
import { goalkeeperAgents } from '@goalkeeper/client/openai-agents'

const GOAL = 'Build a REST API for user management with JWT authentication'
const PLAN = ['design the user schema', 'implement signup and login endpoints with JWT', 'write tests for the auth endpoints']

/** The scripted stand-in: each model call asks for the next piece of work, then the same distraction. */
function scriptedModel(): Model {
  const script = [...PLAN.slice(0, 2), 'browse cat pictures on reddit for inspiration']
  let call = 0
  return {
    async getResponse(): Promise<ModelResponse> {
      const action = script[Math.min(++call, script.length) - 1]
      return { usage: new Usage(), output: [{ type: 'function_call', callId: `call_${call}`, name: 'work', arguments: JSON.stringify({ action }), status: 'completed' }] }
    },
    getStreamedResponse() {
      throw new Error('streaming is not scripted')
    },
  }
}

function runner(): Runner {
  const { OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: apiKey, OPENAI_MODEL: model = 'gpt-4o-mini' } = process.env
  if (baseURL && apiKey) return new Runner({ modelProvider: new OpenAIProvider({ baseURL, apiKey, useResponses: false }), model, tracingDisabled: true })
  return new Runner({ model: scriptedModel(), tracingDisabled: true })
}

const apiKey = process.env.GOALKEEPER_API_KEY
if (!apiKey) throw new Error('Set GOALKEEPER_API_KEY (the quick start prints one).')
const client = new Goalkeeper({ baseUrl: process.env.GOALKEEPER_URL ?? 'http://127.0.0.1:8080', apiKey })
const session = await client.sessions.create({ goal: GOAL, plan: PLAN })

const gk = goalkeeperAgents({
  client,
  sessionId: session.id,
  stopOn: ['abort', 'replan'],
  onVerdict: ({ step_number, verification: v }) => console.log(`step ${step_number}: ${v.recommended_action} (alignment ${v.alignment_score.toFixed(2)})`),
})
const work = tool({
  name: 'work',
  description: 'Do one piece of work towards the goal',
  parameters: z.object({ action: z.string().describe('what you do') }),
  execute: async ({ action }) => `done: ${action}`,
})
const agent = new Agent({
  name: 'builder',
  instructions: `You are a coding agent. Goal: ${GOAL}. Do one piece of work per tool call.`,
  tools: gk.guardTools([work]),
  outputGuardrails: [gk.outputGuardrail],
})

try {
  const result = await gk.attach(runner()).run(agent, 'Start.', { ...gk.runOptions, maxTurns: 20 })
  console.log(`finished: ${String(result.finalOutput)}`)
} catch (err) {
  // A tripped tool guardrail arrives wrapped in the ToolCallError of the refused call.
  const cause = err instanceof ToolCallError ? err.error : err
  console.log(`stopped by goalkeeper: ${cause instanceof Error ? cause.constructor.name : String(cause)}; last verdict: ${gk.guard.last?.verification.recommended_action ?? 'none'}`)
}
