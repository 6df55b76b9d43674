/**
 * Step verification by an OpenAI-compatible chat-completions endpoint (GOALKEEPER_LLM_*). The
 * engine decides when to ask and blends the score; this only sends the prompt and returns the
 * answer text. Any failure throws, and the engine then keeps the heuristic: a slow or broken
 * LLM never fails a step.
 */
import type { Dispatcher } from 'undici'
import type { LlmConfig } from '../config.js'
import type { LlmVerifyFn } from '../engine/llm-verify.js'

const MAX_ANSWER_BYTES = 64 * 1024

/** `GOALKEEPER_LLM_URL` may be a base URL (`…/v1`) or the full `…/chat/completions` endpoint. */
export function completionsUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '')
  return trimmed.endsWith('/chat/completions') ? trimmed : `${trimmed}/chat/completions`
}

export function createLlmVerify(config: LlmConfig, dispatcher?: Dispatcher): LlmVerifyFn {
  const url = completionsUrl(config.url)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`
  // Loaded here, not at module load: a process without an LLM configured never pays for undici
  // (see webhooks/dispatcher.ts). Started now so that the first call does not wait for it.
  const undici = import('undici')
  undici.catch(() => {}) // a failure surfaces on the first call, which falls back to the heuristic
  return async (prompt: string): Promise<string> => {
    const { request } = await undici
    const res = await request(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        model: config.model,
        messages: [{ role: 'user', content: prompt }],
        temperature: 0,
        max_tokens: 150,
      }),
      // The engine stops waiting at the same limit; this also frees the socket.
      signal: AbortSignal.timeout(config.timeoutMs),
      headersTimeout: config.timeoutMs,
      bodyTimeout: config.timeoutMs,
      ...(dispatcher === undefined ? {} : { dispatcher }),
    })
    const text = await readCapped(res.body)
    if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`LLM endpoint answered ${res.statusCode}`)
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new Error('LLM endpoint answered with invalid JSON')
    }
    const content = (json as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content
    if (typeof content !== 'string') throw new Error('LLM answer has no choices[0].message.content')
    return content
  }
}

async function readCapped(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += (chunk as Buffer).length
    if (size > MAX_ANSWER_BYTES) {
      body.destroy()
      throw new Error('LLM answer too large')
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}
