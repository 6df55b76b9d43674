/**
 * Domain errors thrown by services and routes; the HTTP layer renders them as RFC 9457
 * problem+json. Services never shape HTTP responses themselves.
 */
export interface FieldError {
  path: string
  message: string
}

/** The part of a request a field error points into, named as Fastify's schema validation names it. */
export type RequestPart = 'body' | 'querystring' | 'params' | 'headers'

/**
 * Every `errors[].path` has the format schema validation gives its 400s: the request part, then
 * the field's segments joined by '/' (`body/trigger/cron`, `querystring/cursor`), so clients
 * match one format whichever layer refused the value.
 */
export function fieldPath(part: RequestPart, ...segments: (string | number)[]): string {
  return [part, ...segments].join('/')
}

export class AppError extends Error {
  readonly status: number
  readonly code: string
  readonly errors?: FieldError[]
  readonly headers?: Record<string, string>

  constructor(status: number, code: string, message: string, extra: { errors?: FieldError[]; headers?: Record<string, string> } = {}) {
    super(message)
    this.name = 'AppError'
    this.status = status
    this.code = code
    if (extra.errors) this.errors = extra.errors
    if (extra.headers) this.headers = extra.headers
  }
}

export const badRequest = (message: string, errors?: FieldError[]) => new AppError(400, 'bad_request', message, errors ? { errors } : {})
/**
 * A 400 for one field a service checked, typed as schema validation types its own
 * (`validation_failed`) and worded alike ("Invalid request: body/until must …") unless a fuller
 * `detail` says what is wrong, so a client sees one shape.
 */
export const invalidField = (path: string, message: string, detail = `Invalid request: ${path} ${message}.`) => new AppError(400, 'validation_failed', detail, { errors: [{ path, message }] })
export const unauthorized = (message = 'Missing or invalid API key.') => new AppError(401, 'unauthorized', message, { headers: { 'www-authenticate': 'Bearer' } })
export const forbidden = (message = 'This call needs the admin token.') => new AppError(403, 'forbidden', message)
/** Unknown ids and other agents' ids get the same answer, so ids leak nothing. */
/** `errors` names the field when the unknown id came in a body (a reference, not the path's resource). */
export const notFound = (kind: string, id: string, errors?: FieldError[]) => new AppError(404, 'not_found', `No ${kind} with id ${id}.`, errors ? { errors } : {})
export const conflict = (message: string) => new AppError(409, 'conflict', message)
/**
 * A 409 that sending the same request again resolves (a lost write race, a key whose first request
 * is still running or just committed): `Retry-After` tells a client it may, and when.
 */
export const transientConflict = (message: string) => new AppError(409, 'conflict', message, { headers: { 'retry-after': '1' } })
export const unprocessable = (message: string, errors?: FieldError[]) => new AppError(422, 'unprocessable', message, errors ? { errors } : {})
export const tooMany = (message: string, retryAfterSeconds: number) => new AppError(429, 'too_many_requests', message, { headers: { 'retry-after': String(retryAfterSeconds) } })
/** A 503 the same request may resolve later: `Retry-After` says when. */
export const unavailable = (message: string, retryAfterSeconds: number) => new AppError(503, 'unavailable', message, { headers: { 'retry-after': String(retryAfterSeconds) } })
