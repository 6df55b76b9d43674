import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { unavailable } from '../../errors.js'

/**
 * A request still unanswered after `ms` is answered 503 problem+json with `Retry-After` (the
 * handler is not stopped: its late answer is dropped). Fastify's own `handlerTimeout` does the
 * same, but it also aborts the request's AbortSignal once a request body has been read, as if the
 * client had gone (fastify/fastify#6725): a DOMException for every POST, ~57 µs of CPU, as much
 * as the rest of a bare POST route.
 */
export const requestTimeout = fp<{ ms: number }>(
  (app, { ms }, done) => {
    app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, next) => {
      const timer = setTimeout(() => {
        if (reply.sent || reply.raw.headersSent) return
        request.log.warn({ timeoutMs: ms }, 'request timed out')
        void reply.send(unavailable('The request did not finish within the request timeout; it may still complete. Retry shortly with the same Idempotency-Key.', 2))
      }, ms)
      // 'close' comes once the answer is sent or the connection is gone, whichever ends the request.
      reply.raw.once('close', () => clearTimeout(timer))
      next()
    })
    done()
  },
  { name: 'request-timeout', fastify: '5.x', dependencies: ['problem-json'] },
)
