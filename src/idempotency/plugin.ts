import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { GroupCommit } from '../db/group-commit.js'
import { badRequest, conflict } from '../errors.js'
import { hashBody, type IdempotencyRequest, type IdempotencyService } from './service.js'

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyState | null
  }
}

/** A keyed request in flight: what identifies it, and its response once stored with its write. */
export interface IdempotencyState extends IdempotencyRequest {
  service: IdempotencyService
  /** The exact body stored by `storeWithWrite`; the handler sends this string. */
  stored?: string
}

const HEADER = 'idempotency-key'

/**
 * `Idempotency-Key` for routes with `config: { idempotent: true }`: the first 2xx response is
 * stored; the same key with the same method, path and body replays it (header
 * `idempotent-replayed: true`); the same key with anything else is a 409. Failed calls are not
 * stored, so a client may retry them with the same key.
 *
 * The hooks are attached to those routes only (through `onRoute`), and a request without the
 * header returns from the first line of the preHandler, so it pays nothing measurable.
 *
 * Durability: a group-committed write (steps, drift checks) resolves only after its batch has
 * committed, so a record saved in onSend would land in a later transaction, and a crash between
 * the two would let a retry record the step twice. Those routes store their record inside the
 * write's own transaction instead (`storeWithWrite`, which a webhook's create also takes after its
 * DNS check); synchronous creates run with their record in one transaction (`sendCreated`). For
 * any other idempotent route, onSend saves and, if that save joined a batch that is still open,
 * waits for it: the global group-commit onSend hook has already run by then (global hooks run
 * before route ones).
 */
export function installIdempotency(app: FastifyInstance, service: IdempotencyService, group: GroupCommit): void {
  app.decorateRequest('idempotency', null)
  // Keys whose first request is still running (handlers that await, e.g. a DNS check): a
  // concurrent duplicate gets a 409 instead of running the create twice.
  const inFlight = new Set<string>()
  const slot = (req: IdempotencyState) => `${req.scope}\u0000${req.key}`

  // preHandler: after auth (scope) and body validation (hash of the parsed body).
  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = request.headers[HEADER]
    if (raw === undefined) return
    const key = Array.isArray(raw) ? raw[0] : raw
    if (!key || key.length > 255) throw badRequest('Idempotency-Key must be 1 to 255 characters.')
    const req: IdempotencyState = {
      service,
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
    if (req && req.stored === undefined && reply.statusCode >= 200 && reply.statusCode < 300 && typeof payload === 'string') {
      service.save(req, reply.statusCode, payload)
      if (group.open) await group.committed()
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

/**
 * For a handler whose write is group-committed: a callback to run inside that write's
 * transaction, which stores the response it will send (serialized by the route's schema for
 * `status`) with the write, so the record commits or rolls back with it. Undefined without an
 * `Idempotency-Key`. The handler then sends `sendStored` instead of the value.
 */
export function storeWithWrite(request: FastifyRequest, reply: FastifyReply, status: number): ((value: unknown) => void) | undefined {
  const req = request.idempotency
  if (req === null) return undefined
  return (value) => {
    // The route serializers are fast-json-stringify: always a string.
    const body = String(reply.code(status).serialize(value))
    req.service.save(req, status, body)
    req.stored = body
  }
}

/** Sends `value`, or the exact body `storeWithWrite` stored for this request. */
export function sendStored(request: FastifyRequest, reply: FastifyReply, status: number, value: unknown): FastifyReply {
  const stored = request.idempotency?.stored
  reply.code(status)
  return stored === undefined ? reply.send(value) : reply.type('application/json; charset=utf-8').send(stored)
}

/**
 * Runs a synchronous create and, with an `Idempotency-Key`, stores its response in the same
 * transaction, so a crash can never leave the one without the other; sends the result.
 */
export function sendCreated<T>(request: FastifyRequest, reply: FastifyReply, status: number, create: () => T): FastifyReply {
  const store = storeWithWrite(request, reply, status)
  const value = store === undefined
    ? create()
    : request.idempotency!.service.transaction(() => {
        const created = create()
        store(created)
        return created
      })
  return sendStored(request, reply, status, value)
}
