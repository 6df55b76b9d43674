/**
 * An agent's settings for its coding agents' hooks (`PUT /v1/settings` `hooks`), and the query
 * string a hook URL may override them (and the agent's `session_defaults`) with.
 */
import { Type, type Static } from 'typebox'
import { FORMER_IMMEDIATE } from '../engine/detection/escalation.js'
import type { SessionConfigInput } from '../engine/session/session-config.js'

export const HookSettings = Type.Object(
  {
    max_stop_blocks: Type.Integer({
      minimum: 0,
      maximum: 20,
      description: 'Times in a row, per user prompt, a stop with open todo items is answered "carry on" (default 3; 0: never).',
    }),
    tool_output: Type.Union([Type.Literal('store'), Type.Literal('digest')], {
      description: "'store' (default): tool output is kept, redacted and cut to 2,000 characters; 'digest': only a hash of it, which loop detection compares.",
    }),
  },
  { title: 'HookSettings' },
)
export type HookSettings = Static<typeof HookSettings>
export const HookSettingsUpdate = Type.Partial(HookSettings, { additionalProperties: false })

export const DEFAULT_HOOK_SETTINGS: Readonly<HookSettings> = { max_stop_blocks: 3, tool_output: 'store' }

/** `?…` on a hook URL: a few session config fields and hook settings, per URL. */
export const HookQuery = Type.Object({
  escalation: Type.Optional(Type.Union([Type.Literal('immediate'), Type.Literal('graduated'), Type.Literal(FORMER_IMMEDIATE)], { description: 'seed: the former name of immediate (deprecated).' })),
  similarity: Type.Optional(Type.Union([Type.Literal('lexical'), Type.Literal('enhanced'), Type.Literal('embeddings')])),
  budget_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: "The session's token budget." })),
  budget_usd: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: "The session's cost budget, dollars." })),
  loop_exempt_tools: Type.Optional(Type.String({ maxLength: 2000, description: 'Comma-separated tool names never counted as a loop.' })),
  max_stop_blocks: Type.Optional(HookSettings.properties.max_stop_blocks),
  tool_output: Type.Optional(HookSettings.properties.tool_output),
})
export type HookQuery = Static<typeof HookQuery>

/** A hook URL's query string as session config overrides (on top of the agent's `session_defaults`). */
export function hookConfigOverrides(q: HookQuery): SessionConfigInput {
  const budget: NonNullable<SessionConfigInput['budget']> = {}
  if (q.budget_tokens !== undefined) budget.tokens = q.budget_tokens
  if (q.budget_usd !== undefined) budget.cost_usd = q.budget_usd
  return {
    ...(q.escalation === undefined ? {} : { escalation: q.escalation }),
    ...(q.similarity === undefined ? {} : { similarity: q.similarity }),
    ...(Object.keys(budget).length === 0 ? {} : { budget }),
    ...(q.loop_exempt_tools === undefined
      ? {}
      : {
          loop_exempt_tools: q.loop_exempt_tools
            .split(',')
            .map((t) => t.trim())
            .filter((t) => t !== ''),
        }),
  }
}

/** The agent's hook settings with the URL's overrides. */
export function hookSettings(agent: HookSettings, q: HookQuery): HookSettings {
  return { max_stop_blocks: q.max_stop_blocks ?? agent.max_stop_blocks, tool_output: q.tool_output ?? agent.tool_output }
}
