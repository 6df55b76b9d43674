import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type TSchema } from 'typebox'
import type { Metrics } from '../metrics.js'
import { problemResponses } from '../schemas.js'
import { readClaudeCode, writeClaudeCode } from './claude-code.js'
import { readGeminiCli, writeGeminiCli } from './gemini-cli.js'
import type { HookAnswer, HookEvent } from './events.js'
import type { HookClient, HooksService } from './service.js'
import { HookQuery } from './settings.js'

/** Hook bodies carry tool inputs and outputs (a file written, a file read): more room than other routes. */
const HOOK_BODY_LIMIT = 4 * 1024 * 1024

const tags = ['hooks']

/** Any event a CLI sends: the fields goalkeeper reads are checked, every other field is accepted as it comes. */
const EventBody = (description: string, example: Record<string, unknown>) =>
  Type.Object(
    {
      hook_event_name: Type.String({ minLength: 1, maxLength: 100, description: 'The event; unknown events are answered `{}` (no effect).' }),
      session_id: Type.String({ minLength: 1, maxLength: 200, description: "The agent's session id: one goal session per agent and session id (`external_id`)." }),
    },
    { additionalProperties: true, description, examples: [example] },
  )

const GeminiCliOutput = Type.Object(
  {
    decision: Type.Optional(Type.Union([Type.Literal('deny'), Type.Literal('block')])),
    reason: Type.Optional(Type.String()),
    hookSpecificOutput: Type.Optional(Type.Object({ hookEventName: Type.String(), additionalContext: Type.String() })),
  },
  { title: 'GeminiCliHookOutput', description: "Gemini CLI's hook output JSON; `{}` changes nothing." },
)

const ClaudeCodeOutput = Type.Object(
  {
    decision: Type.Optional(Type.Literal('block')),
    reason: Type.Optional(Type.String()),
    hookSpecificOutput: Type.Optional(
      Type.Object({
        hookEventName: Type.String(),
        additionalContext: Type.Optional(Type.String()),
        permissionDecision: Type.Optional(Type.Literal('deny')),
        permissionDecisionReason: Type.Optional(Type.String()),
      }),
    ),
  },
  { title: 'ClaudeCodeHookOutput', description: "Claude Code's (and Codex CLI's) hook output JSON; `{}` changes nothing." },
)

interface HookRoute {
  client: HookClient
  summary: string
  /** The CLI's hook output JSON. */
  output: TSchema
  /** An event as the CLI sends it: the request example. */
  example: Record<string, unknown>
  read: (body: Record<string, unknown>) => HookEvent
  write: (eventName: string, answer: HookAnswer) => object
}

/**
 * `POST /v1/hooks/{client}`: a coding agent's hook events. goalkeeper never blocks an agent by
 * failing: past validation, any failure is logged, counted (goalkeeper_hook_failures_total) and
 * answered with an empty 2xx, which every CLI reads as "no decision".
 */
export const hookRoutes: FastifyPluginAsyncTypebox<{ hooks: HooksService; metrics: Metrics }> = async (app, { hooks, metrics }) => {
  const route = (r: HookRoute) =>
    app.post(
      `/hooks/${r.client}`,
      {
        bodyLimit: HOOK_BODY_LIMIT,
        // What a tool printed or was called with comes as it is (a binary file's bytes): mended, not refused.
        config: { auth: 'agent', textMended: 'all' },
        schema: {
          operationId: `send${r.client.replace(/(^|-)(.)/g, (_, _dash: string, c: string) => c.toUpperCase())}Hook`,
          tags,
          summary: r.summary,
          querystring: HookQuery,
          body: EventBody(`${r.summary} Every field the CLI sends is accepted.`, r.example),
          response: { 200: r.output, ...problemResponses },
        },
      },
      async (request, reply) => {
        const body = request.body as Record<string, unknown>
        let answer: HookAnswer = {}
        try {
          answer = await hooks.handle(request.agentId, r.client, r.read(body), request.query)
        } catch (err) {
          request.log.warn({ err, client: r.client, event: body.hook_event_name }, 'hook failed; answered with no decision')
          metrics.hookFailures.inc({ client: r.client })
        }
        metrics.hookEvents.inc({ client: r.client, answer: answer.deny ? 'deny' : answer.block ? 'block' : answer.context ? 'context' : 'none' })
        return reply.send(r.write(request.body.hook_event_name, answer))
      },
    )

  route({
    client: 'claude-code',
    summary: "A Claude Code hook event (its http hooks' JSON).",
    output: ClaudeCodeOutput,
    example: {
      session_id: '2f6c1a8e-4b1d-4d0e-9a57-3c2b8f1e7d90',
      transcript_path: '/home/dev/.claude/projects/api/2f6c1a8e-4b1d-4d0e-9a57-3c2b8f1e7d90.jsonl',
      cwd: '/home/dev/api',
      permission_mode: 'default',
      hook_event_name: 'UserPromptSubmit',
      prompt: 'Rate-limit POST /login to 5 attempts per minute per IP and return 429 with Retry-After beyond that',
    },
    read: readClaudeCode,
    write: writeClaudeCode,
  })
  // Codex CLI's command hooks send Claude Code's event names and read its output JSON.
  route({
    client: 'codex',
    summary: "A Codex CLI hook event (its command hooks' JSON, forwarded by the documented one-line command).",
    output: ClaudeCodeOutput,
    example: {
      session_id: '019a4b2c-7d1e-7f30-9c44-1b2e3d4f5a60',
      transcript_path: '/home/dev/.codex/sessions/2026/11/27/rollout-019a4b2c.jsonl',
      cwd: '/home/dev/api',
      hook_event_name: 'UserPromptSubmit',
      turn_id: '1',
      prompt: 'Make the CSV export stream rows instead of building the whole file in memory',
    },
    read: readClaudeCode,
    write: writeClaudeCode,
  })
  route({
    client: 'gemini-cli',
    summary: "A Gemini CLI hook event (its command hooks' JSON, forwarded by the documented one-line command).",
    output: GeminiCliOutput,
    example: {
      session_id: '6a0f3c2e-91b4-4f7d-8e65-2d3c4b5a6f70',
      transcript_path: '/home/dev/.gemini/tmp/api/chats/session-6a0f3c2e.json',
      cwd: '/home/dev/api',
      hook_event_name: 'BeforeAgent',
      timestamp: '2026-11-27T09:00:00.000Z',
      prompt: 'Add pagination to GET /orders with a cursor and a limit of at most 100',
    },
    read: readGeminiCli,
    write: writeGeminiCli,
  })
}
