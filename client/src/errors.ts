import type { Problem } from './types.js'

/** A field-level message of a validation failure, e.g. `{ path: 'body/trigger/at', ... }`. */
export interface ProblemFieldError {
  path: string
  message: string
}

/**
 * Every failure the client reports: the server's problem+json (RFC 9457) unchanged, or a
 * transport failure (no answer, or none within the timeout) with `status` 0.
 */
export class GoalkeeperError extends Error {
  override readonly name = 'GoalkeeperError'
  /** The HTTP status; 0 when no response arrived. */
  readonly status: number
  /** The problem type URN, e.g. `urn:problem:not_found`. */
  readonly type: string
  readonly title: string
  readonly detail: string | undefined
  readonly instance: string | undefined
  readonly errors: ProblemFieldError[]
  /** The problem document as the server sent it (or the raw body when it was not one). */
  readonly problem: Problem | undefined
  /** Seconds from `Retry-After` on a 429 or 503, when the server gave one. */
  readonly retryAfter: number | undefined

  constructor(problem: Problem, options: { retryAfter?: number; cause?: unknown } = {}) {
    super(problem.detail || problem.title, options.cause === undefined ? undefined : { cause: options.cause })
    this.status = problem.status
    this.type = problem.type
    this.title = problem.title
    this.detail = problem.detail
    this.instance = problem.instance
    this.errors = problem.errors ?? []
    this.problem = problem
    this.retryAfter = options.retryAfter
  }

  /** From a non-2xx response and its parsed body (a problem document, or whatever came). */
  static fromResponse(response: Response, body: unknown): GoalkeeperError {
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'))
    if (isProblem(body)) return new GoalkeeperError(body, { retryAfter })
    const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body)
    const url = new URL(response.url || 'http://invalid/')
    return new GoalkeeperError({ type: 'about:blank', title: response.statusText || `HTTP ${response.status}`, status: response.status, detail: text, instance: url.pathname }, { retryAfter })
  }

  /** No response: the connection failed or every attempt timed out. */
  static transport(cause: unknown, instance: string): GoalkeeperError {
    const timedOut = cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError')
    const detail = cause instanceof Error ? cause.message : String(cause)
    return new GoalkeeperError(
      { type: timedOut ? 'urn:goalkeeper-client:timeout' : 'urn:goalkeeper-client:network', title: timedOut ? 'Request timed out' : 'Network error', status: 0, detail, instance },
      { cause },
    )
  }
}

function isProblem(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && typeof (body as Problem).type === 'string' && typeof (body as Problem).status === 'number'
}

/** `Retry-After` as seconds: either delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds)
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000)
}
