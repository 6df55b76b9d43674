import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { badRequest, conflict } from '../errors.js'
import { hashBody, type IdempotencyRequest, type IdempotencyService } from '../services/idempotency.js'

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyRequest | null
  }
}

const HEADER = 'idempotency-key'

/**
 * `Idempotency-Key` for routes with `config: { idempotent: true }`: the first 2xx response is
 * stored; the same key with the same method, path and body replays it (header
 * `idempotent-replayed: true`); the same key with anything else is a 409. Failed calls are not
 * stored, so a client may retry them with the same key.
 *
 * The hooks are attached to those routes only (through `onRoute`), so every other request, the
 * hot step and drift routes among them, pays nothing for them.
 */
export function installIdempotency(app: FastifyInstance, service: IdempotencyService): void {
  app.decorateRequest('idempotency', null)
  // Keys whose first request is still running (handlers that await, e.g. a DNS check): a
  // concurrent duplicate gets a 409 instead of running the create twice.
  const inFlight = new Set<string>()
  const slot = (req: IdempotencyRequest) => `${req.scope}\u0000${req.key}`

  // preHandler: after auth (scope) and body validation (hash of the parsed body).
  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = request.headers[HEADER]
    if (raw === undefined) return
    const key = Array.isArray(raw) ? raw[0] : raw
    if (!key || key.length > 255) throw badRequest('Idempotency-Key must be 1 to 255 characters.')
    const req: IdempotencyRequest = {
      scope: request.agentId || 'admin',
      agentId: request.agentId || null,
      key,
      method: request.method,
      path: request.url.split('?')[0] ?? request.url,
      bodyHash: hashBody(request.body),
    }
    const found = service.lookup(req)
    if (found.kind === 'mismatch') {
      throw conflict('This Idempotency-Key was already used with a different request (method, path or body).')
    }
    if (found.kind === 'replay') {
      return reply.code(found.status).type('application/json').header('idempotent-replayed', 'true').send(found.body)
    }
    if (inFlight.has(slot(req))) throw conflict('A request with this Idempotency-Key is still in progress; retry shortly.')
    inFlight.add(slot(req))
    request.idempotency = req
  }

  // onResponse runs after errors too; onRequestAbort covers clients that hang up.
  const release = async (request: FastifyRequest) => {
    if (request.idempotency) inFlight.delete(slot(request.idempotency))
  }
  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const req = request.idempotency
    if (req && reply.statusCode >= 200 && reply.statusCode < 300 && typeof payload === 'string') {
      service.save(req, reply.statusCode, payload)
    }
    return payload
  }

  // Must be installed before the routes are registered: onRoute sees only routes added after it.
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.config?.idempotent) return
    // Route-level hooks run after the global ones (auth), as the global preHandler did.
    route.preHandler = [preHandler, ...asArray(route.preHandler)]
    route.onSend = [onSend, ...asArray(route.onSend)]
    route.onResponse = [release, ...asArray(route.onResponse)]
    route.onRequestAbort = [release, ...asArray(route.onRequestAbort)]
  })
}

function asArray<T>(hook: T | T[] | undefined): T[] {
  return hook === undefined ? [] : Array.isArray(hook) ? hook : [hook]
}
