import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { databaseFault } from '../../db/faults.js'
import { AppError, type FieldError } from '../../errors.js'
import { Problem, type ProblemBody } from '../../schemas.js'
import { type AjvIssue, foldUnions, MAX_FIELD_ERRORS } from '../validation.js'
import { REQUEST_ID_HEADER } from './request-id.js'

const PROBLEM_TYPE = 'application/problem+json'

/** Fastify's own 4xx codes, named so clients can branch on `type`. */
const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
}

/** Fastify's wording where it leaves a client guessing what to send instead. */
const DETAILS: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Media Type: send the body as JSON with the header content-type: application/json.',
}

/** `uri_too_long` for 414: a problem type for a 4xx Fastify raised without a code of ours. */
const statusSlug = (status: number) => STATUS_CODES[status]?.toLowerCase().replace(/\W+/g, '_') ?? 'bad_request'

function send(reply: FastifyReply, problem: ProblemBody): void {
  // A pre-serialized string skips the route's response serializer, so every field reaches the client.
  void reply.code(problem.status).type(PROBLEM_TYPE).send(JSON.stringify(problem))
}

function problem(request: FastifyRequest, status: number, code: string, detail: string, errors?: FieldError[]) {
  const body: ProblemBody = {
    type: `urn:problem:${code}`,
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    instance: request.url.split('?')[0] ?? request.url,
  }
  if (errors) body.errors = errors
  return body
}

/** `body/plan/0`, `querystring/limit`: where the bad value is, plus ajv's message; at most MAX_FIELD_ERRORS. */
function fieldErrors(context: string | undefined, issues: AjvIssue[]): FieldError[] {
  return issues.slice(0, MAX_FIELD_ERRORS).map((v) => {
    const extra = (v.params.missingProperty ?? v.params.additionalProperty) as string | undefined
    const pointer = `${v.instancePath}${extra ? `/${extra}` : ''}`
    const path = `${context ?? 'request'}${pointer}`
    const message = v.params.additionalProperty
      ? 'is not a known field'
      : v.keyword === 'pattern' && path === 'querystring/cursor'
        ? "must be a previous page's next_cursor, as given"
        : (v.message ?? 'is invalid')
    return { path, message }
  })
}

function sendAppError(err: AppError, request: FastifyRequest, reply: FastifyReply): void {
  if (err.headers) void reply.headers(err.headers)
  send(reply, problem(request, err.status, err.code, err.message, err.errors))
}

/** Every error leaves as RFC 9457 problem+json; a database that is away, slow or full, as 503 or 507 (src/db/faults.ts). */
function handleError(err: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply): void {
  if (err instanceof AppError) return sendAppError(err, request, reply)
  const fault = databaseFault(err)
  if (fault) {
    // The cause in one line, no stack: during an outage every request logs one.
    request.log.warn({ code: err.code, cause: err.message }, fault.message)
    return sendAppError(fault, request, reply)
  }
  if (err.validation) {
    // Unions are folded first, so the cap counts what a client will read, not ajv's per-branch noise.
    const issues = foldUnions(err.validation as AjvIssue[])
    const errors = fieldErrors(err.validationContext, issues)
    const more = issues.length > errors.length ? ` (and ${issues.length - errors.length} more)` : ''
    const detail = `Invalid request: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}${more}.`
    return send(reply, problem(request, 400, 'validation_failed', detail, errors))
  }
  const status = err.statusCode ?? 500
  if (status >= 400 && status < 500) {
    const code = (err.code && FASTIFY_CODES[err.code]) ?? statusSlug(status)
    return send(reply, problem(request, status, code, DETAILS[err.code] ?? err.message))
  }
  request.log.error({ err }, 'request failed')
  return send(reply, problem(request, status >= 500 ? status : 500, 'internal', 'An unexpected error occurred.'))
}

/**
 * The error handler and the `Problem` schema the routes' `problemResponses` refer to. Registered
 * before any route: a route keeps the error handler its context had when it was added. Unknown
 * routes are answered by `sendNotFound` (./not-found.ts), routing errors by `sendFrameworkError`.
 */
export const problemJson = fp(
  async (app) => {
    app.addSchema(Problem)
    app.setErrorHandler(handleError)
  },
  { name: 'problem-json', fastify: '5.x' },
)

/**
 * Fastify's `frameworkErrors` option: errors raised while routing, before any route or error
 * handler runs (a malformed percent-encoding in the path, a path segment over the router's
 * length limit). Without it they leave as Fastify's own application/json body.
 */
export function sendFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // No hook has run, the request-id plugin's included.
  void reply.header(REQUEST_ID_HEADER, request.id)
  const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400
  send(reply, problem(request, status, statusSlug(status), err.message))
}

/** The 404 handler's answer. */
export function sendNotFound(request: FastifyRequest, reply: FastifyReply): void {
  send(reply, problem(request, 404, 'route_not_found', `No route ${request.method} ${request.url.split('?')[0]}.`))
}
