import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { badRequest, conflict, transientConflict } from '../errors.js'
import { asArray } from '../route-hooks.js'
import { hashBody, sameRequest, type IdempotencyRequest, type IdempotencyService } from './service.js'

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyState | null
  }
  interface FastifyContextConfig {
    /** Honour `Idempotency-Key` (create endpoints, steps, drift checks). */
    idempotent?: boolean
  }
}

/** A keyed request in flight: what identifies it, and its response once stored with its write. */
interface IdempotencyState extends IdempotencyRequest {
  status: number
  /** The exact body stored with the write; sent instead of a second serialization. */
  stored?: string
}

const HEADER = 'idempotency-key'

/** The route's success status: the first 2xx of its response schema. */
function successStatus(route: RouteOptions): number {
  const codes = Object.keys((route.schema?.response as Record<string, unknown> | undefined) ?? {}).map(Number)
  return codes.find((c) => c >= 200 && c < 300) ?? 200
}

const MISMATCH = 'This Idempotency-Key was already used with a different request (method, path or body).'

/**
 * On routes with `config: { idempotent: true }`, a request with an `Idempotency-Key` joins its
 * record to the request's unit of work (`request.uow`, ../http/plugins/unit-of-work.ts): the response (serialized as the route sends it) is sealed and
 * stored in the same transaction as the write it answers for, so a crash can never keep the one
 * without the other. The same key with the same method, path and body replays the stored
 * response (header `idempotent-replayed: true`); with anything else it is a 409. Failed calls store
 * nothing, so a client may retry them with the same key. A request without the header pays for
 * one header lookup. Registered before the routes: it hooks the idempotent ones as they are added,
 * after auth, whose agent scopes the keys.
 */
export const idempotency = fp<{ service: IdempotencyService }>(
  async (app, { service }) => {
    app.decorateRequest('idempotency', null)
    // Keys whose first request is still running (handlers that await, e.g. a DNS check), with what
    // that request was: a concurrent duplicate gets a 409 to retry instead of running the write
    // twice; another request under the same key gets the final mismatch 409 at once.
    const inFlight = new Map<string, IdempotencyRequest>()
    const slot = (req: IdempotencyState) => `${req.scope}\u0000${req.key}`

    // preHandler: after auth (scope) and body validation (hash of the parsed body).
    const preHandler = (status: number) => async (request: FastifyRequest, reply: FastifyReply) => {
      const raw = request.headers[HEADER]
      if (raw === undefined) return
      const key = Array.isArray(raw) ? raw[0] : raw
      if (!key || key.length > 255) throw badRequest('Idempotency-Key must be 1 to 255 characters.')
      const req: IdempotencyState = {
        scope: request.agentId || 'admin',
        agentId: request.agentId || null,
        key,
        method: request.method,
        path: request.url.split('?')[0] ?? request.url,
        bodyHash: hashBody(request.body),
        status,
      }
      const found = await service.lookup(req)
      if (found.kind === 'mismatch') {
        throw conflict(MISMATCH)
      }
      if (found.kind === 'replay') {
        return reply.code(found.status).type('application/json').header('idempotent-replayed', 'true').send(found.body)
      }
      const running = inFlight.get(slot(req))
      if (running !== undefined && !sameRequest(running, req)) throw conflict(MISMATCH)
      if (running !== undefined) throw transientConflict('A request with this Idempotency-Key is still in progress; retry shortly.')
      inFlight.set(slot(req), req)
      request.idempotency = req
      request.uow.also(async (result) => {
        // Serialized as the route will send it (fast-json-stringify for its success status: a string).
        const before = reply.statusCode
        const body = String(reply.code(status).serialize(result))
        reply.code(before)
        const { status: _status, ...record } = req
        await service.save(record, status, body)
        req.stored = body
      })
    }

    // onResponse runs after errors too; onRequestAbort covers clients that hang up.
    const release = async (request: FastifyRequest) => {
      if (request.idempotency) inFlight.delete(slot(request.idempotency))
    }
    // The stored string is what a replay will send: send exactly it now too.
    const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const req = request.idempotency
      if (req?.stored === undefined || reply.statusCode !== req.status) return payload
      reply.type('application/json; charset=utf-8')
      return req.stored
    }

    // Must be installed before the routes are registered: onRoute sees only routes added after it.
    app.addHook('onRoute', (route: RouteOptions) => {
      if (!route.config?.idempotent) return
      const status = successStatus(route)
      // Route-level hooks run after the global ones (auth).
      route.preHandler = [preHandler(status), ...asArray(route.preHandler)]
      route.onSend = [onSend, ...asArray(route.onSend)]
      route.onResponse = [release, ...asArray(route.onResponse)]
      route.onRequestAbort = [release, ...asArray(route.onRequestAbort)]
    })
  },
  { name: 'idempotency', fastify: '5.x', dependencies: ['auth', 'unit-of-work'] },
)
