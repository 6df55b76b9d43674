/**
 * One JSON POST to an OpenAI-compatible provider (the LLM verifier, the embeddings endpoint):
 * Bearer key, a timeout that also frees the socket, a cap on the answer's size, and an error for
 * a non-2xx status or an answer that is not JSON. Callers turn any error into their fallback.
 */
import type { Dispatcher } from 'undici'
import { loadUndici } from '../lazy.js'

export interface ProviderOptions {
  /** Endpoint URL and optional Bearer key. */
  url: string
  apiKey: string | undefined
  timeoutMs: number
  maxAnswerBytes: number
  /** Names the provider in error messages ("LLM", "embeddings"). */
  label: string
  dispatcher?: Dispatcher | undefined
}

/** A non-2xx answer, with its status. */
export class ProviderStatusError extends Error {
  readonly status: number
  constructor(label: string, status: number) {
    super(`${label} endpoint answered ${status}`)
    this.status = status
  }

  /** A 4xx other than 408 and 429: the provider is up and refused this input, not down. */
  get refusedInput(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429
  }
}

/** Returns `post(body)`, which resolves with the parsed JSON answer. */
export function providerPost(opts: ProviderOptions): (body: unknown) => Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`
  // Loaded here, not at module load: a process without a provider configured never pays for
  // undici. Started now so that the first call does not wait for it; a failure surfaces on the
  // first call, which then falls back (and the next call loads again).
  loadUndici().catch(() => {})
  return async (body) => {
    const { request } = await loadUndici()
    const res = await request(opts.url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(opts.timeoutMs),
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      ...(opts.dispatcher === undefined ? {} : { dispatcher: opts.dispatcher }),
    })
    const text = await readCapped(res.body, opts)
    if (res.statusCode < 200 || res.statusCode >= 300) throw new ProviderStatusError(opts.label, res.statusCode)
    try {
      return JSON.parse(text) as unknown
    } catch {
      throw new Error(`${opts.label} endpoint answered with invalid JSON`)
    }
  }
}

async function readCapped(body: Dispatcher.ResponseData['body'], opts: ProviderOptions): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += (chunk as Buffer).length
    if (size > opts.maxAnswerBytes) {
      body.destroy()
      throw new Error(`${opts.label} answer too large`)
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}
