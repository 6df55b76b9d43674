import type { IncomingMessage, ServerResponse } from 'node:http'
import { listenLoopback, nth } from './loopback.js'
import { nextTurn, say, type Block, type Script as AnyScript, type Turn } from './turns.js'

/**
 * A scripted stand-in for the Anthropic Messages API on 127.0.0.1, for running the real Claude
 * Code binary (ANTHROPIC_BASE_URL) without a model. Each `POST /v1/messages` is recorded, and the
 * script decides the assistant's next turn from it; the turn is streamed as Server-Sent Events
 * when the request asks for a stream, or answered as one JSON message otherwise.
 */

export interface MessagesRequest {
  model: string
  stream?: boolean
  system?: unknown
  tools?: { name: string }[]
  messages: { role: string; content: string | ContentBlock[] }[]
  [key: string]: unknown
}
type ContentBlock = { type: string; text?: string; content?: unknown; tool_use_id?: string; is_error?: boolean; [key: string]: unknown }

/**
 * `main`: a turn of the agent's loop (the script answers it); `subagent`: a turn of a subagent the
 * Agent tool started (the script answers it too); `compact`: the summary a compaction asks for;
 * `side`: anything else the binary asks without offering tools.
 */
type RequestKind = 'main' | 'subagent' | 'compact' | 'side'

interface Recorded {
  path: string
  headers: IncomingMessage['headers']
  body: MessagesRequest
  kind: RequestKind
}

/** Decides the next turn of the agent's loop and of its subagents. */
type Script = AnyScript<MessagesRequest, 'main' | 'subagent'>

export interface FakeAnthropic {
  url: string
  /** Every request received, in order, of every kind. */
  requests: Recorded[]
  /** The agent loop's requests only (not its subagents', compactions' or side requests). */
  main(): Recorded[]
  /** The body of the agent loop's request number `n` (0-based); throws when there is none. */
  turn(n: number): MessagesRequest
  /** Replaces the script for the requests still to come. */
  script(next: Script): void
  close(): Promise<void>
}

/** What compactions and side requests get unless `side` says otherwise: a summary in the form compaction asks for. */
const SIDE_ANSWER = '<analysis>Nothing to add.</analysis>\n<summary>The user asked for a task; it is under way.</summary>'

export interface FakeOptions {
  script?: Script
  /** Answers compactions and side requests (default: a short summary). */
  side?: (request: MessagesRequest, kind: 'compact' | 'side') => Turn
  /**
   * The input tokens each answer reports (default: a quarter of the request's size). A count near
   * the model's context window makes the binary compact automatically before its next request.
   */
  inputTokens?: (request: MessagesRequest, kind: RequestKind) => number
}

export async function startFakeAnthropic(options: FakeOptions = {}): Promise<FakeAnthropic> {
  let script: Script = options.script ?? []
  let scripted = 0
  let ids = 0
  const requests: Recorded[] = []

  const next = (body: MessagesRequest, kind: RequestKind): Turn => {
    if (kind === 'compact' || kind === 'side') return options.side?.(body, kind) ?? say(SIDE_ANSWER)
    return nextTurn(script, body, scripted++, kind)
  }

  const route = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const path = (req.url ?? '/').split('?')[0]
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      return json(res, 200, { input_tokens: Math.ceil(raw.length / 4) })
    }
    if (req.method === 'POST' && path === '/v1/messages') {
      const body = JSON.parse(raw) as MessagesRequest
      const kind = kindOf(body)
      requests.push({ path, headers: req.headers, body, kind })
      const turn = next(body, kind)
      const blocks = turn.content.map((b) => (b.type === 'tool_use' ? { ...b, id: b.id ?? `toolu_fake_${++ids}` } : b))
      const stopReason = turn.stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn')
      const message = { id: `msg_fake_${++ids}`, type: 'message', role: 'assistant', model: body.model, stop_sequence: null }
      const usage = { input_tokens: options.inputTokens?.(body, kind) ?? Math.ceil(raw.length / 4), output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
      if (body.stream !== true) return json(res, 200, { ...message, content: blocks, stop_reason: stopReason, usage })
      return stream(res, message, blocks, stopReason, usage)
    }
    json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `the fake model has no ${req.method} ${path}` } })
  }

  const server = await listenLoopback((req, raw, res) => {
    try {
      route(req, res, raw)
    } catch (err) {
      // The binary shows an API error: the test sees it in stderr and in the exit code.
      json(res, 500, { type: 'error', error: { type: 'api_error', message: String((err as Error).message) } })
    }
  })
  const main = () => requests.filter((r) => r.kind === 'main')
  return {
    ...server,
    requests,
    main,
    turn: (n) => nth(main(), n, 'main requests').body,
    script: (s) => {
      script = s
    },
  }
}

/** A request id per answer, as the real API gives (Claude Code's telemetry reports it with each request's usage). */
let answered = 0
const requestId = () => `req_fake_${++answered}`

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId() })
  res.end(JSON.stringify(body))
}

/** The Messages API's stream: message_start, each block as start / delta(s) / stop, message_delta, message_stop. */
function stream(res: ServerResponse, message: object, blocks: Block[], stopReason: string, usage: { input_tokens: number; output_tokens: number }): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId() })
  const event = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  event('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } })
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } })
      event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } })
    } else {
      event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } })
      // Split in two, as the API streams partial JSON: the binary must join the pieces.
      const input = JSON.stringify(block.input)
      const half = Math.floor(input.length / 2)
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: input.slice(0, half) } })
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: input.slice(half) } })
    }
    event('content_block_stop', { index })
  })
  event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } })
  event('message_stop', {})
  res.end()
}

/**
 * Told apart by what this version of the binary sends: a subagent's system prompt names it in its
 * billing line; a compaction asks for a text-only summary in its last message.
 */
function kindOf(body: MessagesRequest): RequestKind {
  if ((body.tools?.length ?? 0) === 0) return 'side'
  if (lastText(body).includes('CRITICAL: Respond with TEXT ONLY')) return 'compact'
  return JSON.stringify(body.system ?? '').includes('cc_is_subagent=true') ? 'subagent' : 'main'
}

/** All the text a request's messages carry (text blocks, tool results), in order: for asserting what the model was shown. */
export function textOf(request: MessagesRequest): string {
  return request.messages.map((m) => blockText(m.content)).join('\n')
}

/** The text of the request's last message: what this turn added (a prompt, tool results, a hook's reason). */
export function lastText(request: MessagesRequest): string {
  const last = request.messages.at(-1)
  return last === undefined ? '' : blockText(last.content)
}

function blockText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return (content as ContentBlock[]).map((b) => (typeof b.text === 'string' ? b.text : blockText(b.content))).join('\n')
}
