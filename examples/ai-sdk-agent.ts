// A Vercel AI SDK tool loop kept on its goal by goalkeeper (@goalkeeper/client/ai).
//   GOALKEEPER_API_KEY=gk_… npm run example:ai        (GOALKEEPER_URL, default http://127.0.0.1:8080)
// With OPENAI_BASE_URL and OPENAI_API_KEY set (any OpenAI-compatible endpoint; OPENAI_MODEL,
// default gpt-4o-mini) a real model drives the loop; without them a scripted mock model starts on
// plan, then drifts and repeats itself, and goalkeeper stops it.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, tool, type LanguageModel } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'
import { Goalkeeper } from '@goalkeeper/client'
import { goalkeeperAi } from '@goalkeeper/client/ai'

const GOAL = 'Build a REST API for user management with JWT authentication'
const PLAN = ['design the user schema', 'implement signup and login endpoints with JWT', 'write tests for the auth endpoints']

function model(): LanguageModel {
  const { OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: apiKey, OPENAI_MODEL: name = 'gpt-4o-mini' } = process.env
  if (baseURL && apiKey) return createOpenAICompatible({ name: 'openai-compatible', baseURL, apiKey })(name)
  const script = [...PLAN.slice(0, 2), 'browse cat pictures on reddit for inspiration']
  let call = 0
  return new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: 'tool-call', toolCallId: `call_${++call}`, toolName: 'work', input: JSON.stringify({ action: script[Math.min(call, script.length) - 1] }) }],
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage: { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } },
      warnings: [],
    }),
  })
}

const apiKey = process.env.GOALKEEPER_API_KEY
if (!apiKey) throw new Error('Set GOALKEEPER_API_KEY (the quick start prints one).')
const client = new Goalkeeper({ baseUrl: process.env.GOALKEEPER_URL ?? 'http://127.0.0.1:8080', apiKey })
const session = await client.sessions.create({ goal: GOAL, plan: PLAN })

const gk = goalkeeperAi({
  client,
  sessionId: session.id,
  stopOn: ['abort', 'replan'],
  onVerdict: ({ step_number, verification: v }) => console.log(`step ${step_number}: ${v.recommended_action} (alignment ${v.alignment_score.toFixed(2)})`),
})

const result = await generateText(
  gk.wrap({
    model: model(),
    system: `You are a coding agent. Goal: ${GOAL}. Do one piece of work per tool call.`,
    prompt: 'Start.',
    tools: {
      work: tool({
        description: 'Do one piece of work towards the goal',
        inputSchema: z.object({ action: z.string().describe('what you do') }),
        execute: async ({ action }) => `done: ${action}`,
      }),
    },
  }),
)

console.log(`stopped after ${result.steps.length} steps; last verdict: ${gk.guard.last?.verification.recommended_action ?? 'none'}`)
