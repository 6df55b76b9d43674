/**
 * An agent's settings for the sessions its coding agents' hooks open (`PUT /v1/settings`
 * `session_defaults` and `hooks`), and the query string a hook URL may override them with.
 */
import { Type, type Static } from 'typebox'
import { HOOK_LOOP_KINDS } from '../engine/detection-config.js'
import { FORMER_IMMEDIATE } from '../engine/escalation.js'
import type { SessionConfigInput } from '../engine/session-config.js'

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

/**
 * What a hook session gets before the agent's `session_defaults` (on top of a new session's
 * defaults): the loop kinds for steps that are tool calls (detection-config.ts) and reminders that
 * are not repeated while unchanged.
 */
export const HOOK_SESSION_CONFIG: Readonly<SessionConfigInput> = { loop_kinds: [...HOOK_LOOP_KINDS], skip_unchanged: true }

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

/** The config of a new hook session: the hooks' defaults, then the agent's, then the URL's. */
export function hookSessionConfig(defaults: SessionConfigInput, q: HookQuery): SessionConfigInput {
  const budget = { ...defaults.budget }
  if (q.budget_tokens !== undefined) budget.tokens = q.budget_tokens
  if (q.budget_usd !== undefined) budget.cost_usd = q.budget_usd
  return {
    ...HOOK_SESSION_CONFIG,
    ...defaults,
    ...(q.escalation === undefined ? {} : { escalation: q.escalation }),
    ...(q.similarity === undefined ? {} : { similarity: q.similarity }),
    ...(Object.keys(budget).length === 0 ? {} : { budget }),
    ...(q.loop_exempt_tools === undefined ? {} : { loop_exempt_tools: q.loop_exempt_tools.split(',').map((t) => t.trim()).filter((t) => t !== '') }),
  }
}

/** The agent's hook settings with the URL's overrides. */
export function hookSettings(agent: HookSettings, q: HookQuery): HookSettings {
  return { max_stop_blocks: q.max_stop_blocks ?? agent.max_stop_blocks, tool_output: q.tool_output ?? agent.tool_output }
}
