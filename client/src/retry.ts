import { GoalkeeperError, parseRetryAfter } from './errors.js'

export interface RetryOptions {
  /** Extra attempts after the first (default 2); 0 turns retrying off. */
  retries?: number
  /** Per-attempt timeout in ms (default 30 000). */
  timeoutMs?: number
  /** First backoff in ms, doubled each attempt, with jitter (default 250). */
  baseDelayMs?: number
  /** Longest wait between attempts, `Retry-After` included: a longer one is not waited for (default 10 000). */
  maxDelayMs?: number
}

/**
 * What openapi-fetch builds a request into. undici's own Request costs as much CPU as the call it
 * makes (body stream, header copies), and a retry would have to read its body back out: this keeps
 * the serialized body as it is, so every attempt sends the same string (client.ts passes it as
 * openapi-fetch's `Request`).
 */
export class PlainRequest {
  readonly url: string
  readonly method: string
  readonly headers: Headers
  readonly body: RequestInit['body']
  readonly signal: AbortSignal | null

  constructor(url: string, init: RequestInit = {}) {
    this.url = url
    this.method = init.method ?? 'GET'
    this.headers = init.headers instanceof Headers ? init.headers : new Headers(init.headers)
    this.body = init.body ?? null
    this.signal = init.signal ?? null
  }
}

type Fetch = (input: PlainRequest) => Promise<Response>

const RETRIED_STATUS = new Set([429, 500, 502, 503, 504])

/** A 409 with `Retry-After` is one the server says a repeat resolves (a lost race, a key still in progress); others are final. */
const retried = (response: Response) => RETRIED_STATUS.has(response.status) || (response.status === 409 && response.headers.has('retry-after'))

/**
 * A fetch that retries what is safe to repeat: every request but a POST without an
 * Idempotency-Key (the server replays a keyed write instead of doing it twice). It retries a
 * timed-out or failed connection, 429 and a 409 carrying `Retry-After` (after it) and 5xx, up to
 * `retries` times, and turns a transport failure into a GoalkeeperError.
 */
export function retryingFetch(options: RetryOptions = {}, baseFetch: typeof fetch = globalThis.fetch): Fetch {
  const retries = options.retries ?? 2
  const timeoutMs = options.timeoutMs ?? 30_000
  const baseDelayMs = options.baseDelayMs ?? 250
  const maxDelayMs = options.maxDelayMs ?? 10_000

  return async (request) => {
    const repeatable = request.method !== 'POST' || request.headers.has('idempotency-key')
    const attempts = repeatable ? retries + 1 : 1
    const { body } = request
    const path = new URL(request.url).pathname
    for (let attempt = 1; ; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs)
      const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout
      let response: Response
      try {
        response = await baseFetch(request.url, { method: request.method, headers: request.headers, body, signal })
      } catch (err) {
        // The caller's own abort is final; a timeout or a failed connection is worth another try.
        if (request.signal?.aborted || attempt >= attempts) throw GoalkeeperError.transport(err, path)
        await sleep(backoff(attempt, baseDelayMs, maxDelayMs), request.signal)
        continue
      }
      if (!retried(response) || attempt >= attempts) return response
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'))
      const wait = retryAfter === undefined ? backoff(attempt, baseDelayMs, maxDelayMs) : retryAfter * 1000
      // A server asking for a longer pause than we are willing to wait gets its answer surfaced.
      if (wait > maxDelayMs) return response
      await response.body?.cancel()
      await sleep(wait, request.signal)
    }
  }
}

function backoff(attempt: number, base: number, max: number): number {
  const exp = Math.min(max, base * 2 ** (attempt - 1))
  return exp / 2 + Math.random() * (exp / 2)
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(done, ms)
    function done() {
      signal?.removeEventListener('abort', aborted)
      resolve()
    }
    function aborted() {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', aborted, { once: true })
  })
}
