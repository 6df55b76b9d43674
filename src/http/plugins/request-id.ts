import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'

export const REQUEST_ID_HEADER = 'x-request-id'

/** What a caller may send as its own id: printable ASCII, 1 to 200 characters (it ends up in logs). */
const ACCEPTED = /^[\x20-\x7e]{1,200}$/

/**
 * Fastify's `genReqId` option: the caller's `x-request-id` when it is acceptable, else a fresh UUID.
 * Fastify's `requestIdHeader` option would take any header value as is, so the check lives here.
 * Fastify puts the id on every log line of the request as `reqId`.
 */
export function genReqId(req: IncomingMessage): string {
  const sent = req.headers[REQUEST_ID_HEADER]
  return typeof sent === 'string' && ACCEPTED.test(sent) ? sent : randomUUID()
}

/**
 * Every response carries the request's id. Set first thing, so replies that end the request early
 * (auth, rate limit, 404) carry it too; errors raised while routing, before any hook, get it from
 * `sendFrameworkError`.
 */
export const requestId = fp(
  (app, _opts, done) => {
    // Callback style, not async: this runs on every request.
    app.addHook('onRequest', (request, reply, next) => {
      reply.header(REQUEST_ID_HEADER, request.id)
      next()
    })
    done()
  },
  { name: 'request-id', fastify: '5.x' },
)
