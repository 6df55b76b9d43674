import { listenLoopback, nth } from './loopback.js'
import { nextTurn, type Script, type Turn } from './turns.js'

/**
 * A scripted stand-in for the OpenAI Responses API on 127.0.0.1, for Codex CLI (a model provider
 * with this `base_url` and `wire_api = "responses"`). Each `POST /v1/responses` is recorded and
 * answered with the script's turn as the stream Codex reads: `response.created`, per output item
 * `response.output_item.added` (and `response.output_text.delta` for text) and
 * `response.output_item.done`, then `response.completed`.
 */

/** An input item as Codex sends it: messages (`user`, `developer`, `assistant`), function calls and their outputs. */
export type InputItem = { type: string; role?: string; content?: { type: string; text?: string }[]; name?: string; arguments?: string; call_id?: string; output?: string }
export interface ResponsesRequest {
  model: string
  input: InputItem[]
  tools?: { type: string; name?: string }[]
  [key: string]: unknown
}

export interface FakeOpenAI {
  /** The base URL for Codex's provider: ends in /v1. */
  url: string
  requests: ResponsesRequest[]
  /** Request number `n` (0-based); throws when there is none. */
  request(n: number): ResponsesRequest
  close(): Promise<void>
}

export async function startFakeOpenAI(script: Script<ResponsesRequest>): Promise<FakeOpenAI> {
  const requests: ResponsesRequest[] = []
  let ids = 0
  const server = await listenLoopback((req, raw, res) => {
    if (req.method !== 'POST' || !(req.url ?? '').startsWith('/v1/responses')) {
      res.writeHead(404, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ error: { message: `the fake model has no ${req.method} ${req.url}` } }))
    }
    const body = JSON.parse(raw) as ResponsesRequest
    requests.push(body)
    let turn: Turn
    try {
      turn = nextTurn(script, body, requests.length - 1, undefined)
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ error: { message: (err as Error).message } }))
    }
    const id = `resp_fake_${++ids}`
    const items = turn.content.map((b) => {
      const n = ++ids
      return b.type === 'text'
        ? { type: 'message', id: `msg_fake_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: b.text, annotations: [] }] }
        : { type: 'function_call', id: `fc_fake_${n}`, call_id: b.id ?? `call_fake_${n}`, name: b.name, arguments: JSON.stringify(b.input), status: 'completed' }
    })
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    const event = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
    event('response.created', { response: { id, object: 'response', status: 'in_progress', output: [] } })
    items.forEach((item, output_index) => {
      event('response.output_item.added', { output_index, item: item.type === 'message' ? { ...item, content: [], status: 'in_progress' } : { ...item, arguments: '' } })
      if (item.type === 'message') event('response.output_text.delta', { output_index, content_index: 0, item_id: item.id, delta: item.content?.[0]?.text })
      event('response.output_item.done', { output_index, item })
    })
    const usage = { input_tokens: 100, output_tokens: 10, total_tokens: 110, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } }
    event('response.completed', { response: { id, object: 'response', status: 'completed', output: items, usage } })
    res.end()
  })
  return { url: `${server.url}/v1`, close: server.close, requests, request: (n) => nth(requests, n, 'requests') }
}

/** An input item's text: a message's text parts, or a function call's output. */
export const itemText = (item: InputItem): string => item.output ?? (item.content ?? []).map((c) => c.text ?? '').join('\n')
