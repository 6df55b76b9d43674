/**
 * A coding agent's tool call as a goal-session step, whichever way it reached goalkeeper (a hook
 * event, an OTLP span or log event): a short description an engineer would write ("Bash: npm
 * test", "Edit src/app.ts"), the arguments bounded, and the tool's response as the step's output
 * text, all redacted (redact.ts), or only a digest of the output when the agent's settings keep none.
 */
import { createHash } from 'node:crypto'
import type { StepTool } from '../engine/detection/loop-kinds.js'
import { countTokens, truncateChars } from '../engine/similarity/text.js'
import type { StepInput } from '../sessions/model.js'
import { redact, redactJson } from './redact.js'

/** Characters of a tool's output kept (the loop detectors and alignment read the start). */
const OUTPUT_MAX = 2000
/** Characters of one string argument kept; a longer one keeps a digest of the rest, so calls stay distinct. */
const ARG_MAX = 1000
const ARGS_DEPTH = 6
const ARGS_KEYS = 50
const DESCRIPTION_MAX = 300

/** The argument that says what a call is about, per common coding-agent tool. */
const SUBJECT_ARGS = ['command', 'cmd', 'file_path', 'path', 'absolute_path', 'pattern', 'query', 'url', 'description', 'prompt'] as const

const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 16)

function bound(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return value.length <= ARG_MAX ? value : `${truncateChars(value, ARG_MAX)} [+${value.length - ARG_MAX} chars, sha256:${digest(value)}]`
  if (depth >= ARGS_DEPTH || value === null || typeof value !== 'object') return typeof value === 'object' && value !== null ? '[…]' : value
  if (Array.isArray(value)) return value.slice(0, ARGS_KEYS).map((v) => bound(v, depth + 1))
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, ARGS_KEYS)
      .map(([k, v]) => [k, bound(v, depth + 1)]),
  )
}

/** The call as stored: redacted and bounded arguments (a tool without object arguments gets `{ input }`). */
export function toolOf(name: string, input: unknown): StepTool {
  const args = input !== null && typeof input === 'object' && !Array.isArray(input) ? input : input === undefined ? {} : { input }
  return { name: truncateChars(name, 200), args: bound(redactJson(args), 0) as Record<string, unknown> }
}

/** "Bash: npm test", "Edit src/app.ts", or the tool's name and its first string argument. */
function describeCall(tool: StepTool): string {
  const key = SUBJECT_ARGS.find((k) => typeof tool.args[k] === 'string') ?? Object.keys(tool.args).find((k) => typeof tool.args[k] === 'string')
  const subject = key === undefined ? '' : (tool.args[key] as string).replace(/\s+/g, ' ').trim()
  const sep = key === 'command' || key === 'cmd' ? ': ' : ' '
  return truncateChars(subject === '' ? tool.name : `${tool.name}${sep}${subject}`, DESCRIPTION_MAX)
}

/**
 * The text of a tool's response: a string as it is; a shell result's stdout and stderr; a file
 * read's content; anything else as JSON.
 */
function responseText(response: unknown): string {
  if (response === undefined || response === null) return ''
  if (typeof response === 'string') return response
  if (typeof response === 'object' && !Array.isArray(response)) {
    const r = response as Record<string, unknown>
    const parts = [r.stdout, r.stderr, r.output, r.llmContent, r.content, r.error].filter((p): p is string => typeof p === 'string' && p !== '')
    const file = r.file as { content?: unknown } | undefined
    if (typeof file?.content === 'string') parts.push(file.content)
    if (parts.length > 0) return parts.join('\n')
  }
  return JSON.stringify(response) ?? ''
}

/** What is kept of a tool's output: the text (redacted and cut), or only its digest. */
export type ToolOutput = 'store' | 'digest'

/** Characters of a call's arguments and output counted as its tokens (a bound on the work per event). */
const COUNTED_MAX = 8000

/**
 * The step a tool call makes, as the agent's settings keep its output (`hooks.tool_output`). With
 * `contextTokens` (a hook's step) its `tokens` are the o200k count of the call's arguments and
 * output (their first 8,000 characters): what the call put into the agent's context, the only
 * spend a hook sees. Telemetry reports the model's own usage instead, so it counts none.
 */
export function toolStep(tool: StepTool, response: unknown, error: boolean, settings: { tool_output: ToolOutput; contextTokens?: boolean }): StepInput {
  const text = responseText(response)
  const output = settings.tool_output === 'digest' ? (text === '' ? '' : `sha256:${digest(text)}`) : truncateChars(redact(truncateChars(text, 2 * OUTPUT_MAX)), OUTPUT_MAX)
  const step: StepInput = { description: describeCall(tool), output, tool, error }
  if (settings.contextTokens === true) step.tokens = countTokens(truncateChars(`${JSON.stringify(tool.args)}\n${text}`, COUNTED_MAX))
  return step
}
