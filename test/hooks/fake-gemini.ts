import { listenLoopback, nth } from './loopback.js'
import { nextTurn, type Script, type Turn } from './turns.js'

/**
 * A scripted stand-in for the Gemini API on 127.0.0.1, for Gemini CLI (GOOGLE_GEMINI_BASE_URL).
 * `:streamGenerateContent` (the agent's turns: they offer tools) answers the script's turn as one
 * SSE chunk; `:generateContent` (its side requests, such as routing, which ask for JSON of a
 * schema) gets an object of that schema; `:countTokens` a count. Every request is recorded.
 */

export type Part = { text?: string; functionCall?: { name: string; args: object }; functionResponse?: { name: string; response: Record<string, unknown> } }
export interface GeminiRequest {
  contents: { role?: string; parts: Part[] }[]
  tools?: { functionDeclarations?: { name: string }[] }[]
  generationConfig?: { responseJsonSchema?: Schema }
  [key: string]: unknown
}
type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; enum?: unknown[] }

export interface FakeGemini {
  url: string
  /** The agent's requests (streamed, with tools); side requests are not kept. */
  requests: GeminiRequest[]
  request(n: number): GeminiRequest
  close(): Promise<void>
}

export async function startFakeGemini(script: Script<GeminiRequest>): Promise<FakeGemini> {
  const requests: GeminiRequest[] = []
  const server = await listenLoopback((req, raw, res) => {
    const url = req.url ?? ''
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (url.includes(':countTokens')) return json(200, { totalTokens: 100 })
    if (!/:(stream)?[gG]enerateContent/.test(url)) return json(404, { error: { code: 404, message: `the fake model has no ${req.method} ${url}` } })
    const body = JSON.parse(raw) as GeminiRequest
    const schema = body.generationConfig?.responseJsonSchema
    let turn: Turn
    if (!url.includes(':streamGenerateContent')) turn = { content: [{ type: 'text', text: JSON.stringify(schema ? valueOf(schema) : {}) }] }
    else {
      requests.push(body)
      try {
        turn = nextTurn(script, body, requests.length - 1, undefined)
      } catch (err) {
        return json(500, { error: { code: 500, message: (err as Error).message } })
      }
    }
    const parts = turn.content.map((b) => (b.type === 'text' ? { text: b.text } : { functionCall: { name: b.name, args: b.input } }))
    const chunk = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 } }
    if (!url.includes(':streamGenerateContent')) return json(200, chunk)
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`)
  })
  return { ...server, requests, request: (n) => nth(requests, n, 'requests') }
}

/** The plainest value of a JSON schema (Gemini's upper-case type names): every property filled. */
function valueOf(schema: Schema): unknown {
  if (schema.enum !== undefined) return schema.enum[0]
  switch (schema.type?.toLowerCase()) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, valueOf(v)]))
    case 'array':
      return []
    case 'integer':
    case 'number':
      return 1
    case 'boolean':
      return false
    default:
      return 'fake'
  }
}

/** A part's text: its text, or a function response's output or error. */
export const partText = (part: Part): string => part.text ?? String(part.functionResponse?.response.output ?? part.functionResponse?.response.error ?? '')
