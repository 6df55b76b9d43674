/**
 * What goalkeeper reads of an agent's spans and log events: per conversation, its goal, its user
 * prompts, its tool calls (steps) and its model calls' usage, each under a key that names it the
 * same way however often, and by whichever signal, it is delivered.
 */
import { createHash } from 'node:crypto'
import { GOAL_TEXT_MAX } from '../engine/session/agent-turn.js'
import { truncateChars } from '../engine/similarity/text.js'
import type { StepInput } from '../sessions/model.js'
import { redact } from '../tool-calls/redact.js'
import type { ToolOutput } from '../tool-calls/tool-step.js'
import { structured, text, type Attrs } from './attributes.js'

export type ObservedRecord =
  /** `goalkeeper.goal`: the session's goal, whatever the prompts say. */
  | { kind: 'goal'; text: string; service?: string }
  /** A user prompt: the first opens the session as its goal, a later one joins it. */
  | { kind: 'prompt'; text: string; service?: string }
  /** A tool call that ran. */
  | { kind: 'step'; step: StepInput }
  /** A model call's tokens and cost, counted on the next step. */
  | { kind: 'usage'; tokens: number; cost_usd?: number }

export interface Observed {
  /** The session's `external_id`. */
  conversation: string
  /** Unique per conversation: a second delivery of the same thing has the same key. */
  key: string
  /** Start time, epoch ms: the order within one export request. */
  at: number
  record: ObservedRecord
}

/** What extraction needs of the agent's settings. */
export interface ReadOptions {
  tool_output: ToolOutput
}

/** A conversation id longer than a hook's session id may be is refused, not cut (cut ids could meet). */
export const CONVERSATION_MAX = 200

/** Placeholders agents put where a prompt was left out of their telemetry. */
const WITHHELD = /^\s*[<[]?REDACTED[>\]]?\s*$/i

export const digest = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 32)

/** The conversation an item belongs to: `gen_ai.conversation.id`, else `session.id`, else Codex's `conversation.id`. */
export function conversationOf(a: Attrs): string | undefined {
  return text(a, 'gen_ai.conversation.id') ?? text(a, 'session.id') ?? text(a, 'conversation.id')
}

/** A goal or prompt record of `raw` (redacted, bounded), or none when it is empty or withheld. */
function textRecord(kind: 'goal' | 'prompt', raw: string | undefined, a: Attrs): { key: string; record: ObservedRecord } | undefined {
  if (raw === undefined || raw.trim() === '' || WITHHELD.test(raw)) return undefined
  const t = truncateChars(redact(raw), GOAL_TEXT_MAX)
  const service = text(a, 'service.name')
  // Keyed by the text: chat spans repeat the conversation's last prompt, and it is one prompt.
  return { key: `${kind}:${digest(t)}`, record: { kind, text: t, ...(service === undefined ? {} : { service }) } }
}

export const goalRecord = (a: Attrs) => textRecord('goal', text(a, 'goalkeeper.goal'), a)
export const promptRecord = (raw: string | undefined, a: Attrs) => textRecord('prompt', raw, a)

type Message = { role?: unknown; content?: unknown; parts?: unknown }

/** The text of a message: its text parts (GenAI conventions), or its string content. */
function messageText(m: Message): string | undefined {
  if (typeof m.content === 'string') return m.content
  const parts = Array.isArray(m.parts) ? m.parts : Array.isArray(m.content) ? m.content : []
  const texts = parts.flatMap((p: unknown) => {
    const part = p as { type?: unknown; content?: unknown; text?: unknown }
    if (part.type !== undefined && part.type !== 'text') return []
    const t = typeof part.content === 'string' ? part.content : part.text
    return typeof t === 'string' ? [t] : []
  })
  return texts.length === 0 ? undefined : texts.join('\n')
}

/**
 * The latest user prompt in a span's input messages: `gen_ai.input.messages` (GenAI conventions:
 * `[{ role, parts: [{ type: "text", content }] }]`), or OpenLLMetry's `gen_ai.prompt.N.role` /
 * `.content`.
 */
export function lastUserPrompt(a: Attrs): string | undefined {
  const messages = structured(a, 'gen_ai.input.messages')
  if (Array.isArray(messages)) {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i] as Message | null
      if (m?.role !== 'user') continue
      const t = messageText(m)
      if (t !== undefined) return t
    }
  }
  for (let i = 0; ; i++) {
    if (!a.has(`gen_ai.prompt.${i}.role`)) {
      for (let j = i - 1; j >= 0; j--) if (text(a, `gen_ai.prompt.${j}.role`) === 'user') return text(a, `gen_ai.prompt.${j}.content`)
      return undefined
    }
  }
}
