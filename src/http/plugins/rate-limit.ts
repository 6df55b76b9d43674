import { randomBytes } from 'node:crypto'
import rateLimit from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { SqlDatabase } from '../../db/database.js'
import { tooMany } from '../../errors.js'
import { sharedRateLimitStore } from './rate-limit-store.js'

const SELF_CALL_HEADER = 'x-goalkeeper-self-call'
// Random per process and never sent over the wire (app.inject only), so no client can forge it.
const selfCallToken = randomBytes(24).toString('base64url')

/**
 * Headers for a request the app makes to itself (app.inject) on behalf of a caller whose own
 * request was already counted, e.g. an MCP tool call running its REST operation: counted once.
 */
export const SELF_CALL_HEADERS: Readonly<Record<string, string>> = { [SELF_CALL_HEADER]: selfCallToken }
const isSelfCall = (request: FastifyRequest) => request.headers[SELF_CALL_HEADER] === selfCallToken

/**
 * Per-caller requests per minute on every route not declared `auth: 'none'` (0 turns it off).
 * Keyed on the agent, so it needs auth: auth's onRequest hook is placed first on each route, and
 * this plugin's runs after it, when `agentId` is known. With `shared` (PostgreSQL: several
 * replicas) the counts live in the database and the limit is global; otherwise in this process.
 */
export const rateLimiting = fp<{ perMinute: number; shared?: SqlDatabase | undefined }>(
  async (app, { perMinute, shared }) => {
    if (perMinute <= 0) return
    await app.register(rateLimit, {
      global: true,
      // A database hiccup lets requests through rather than failing them.
      ...(shared === undefined ? {} : { store: sharedRateLimitStore(shared), skipOnError: true }),
      hook: 'onRequest',
      max: perMinute,
      timeWindow: 60_000,
      allowList: (request) => request.routeOptions.config.auth === 'none' || isSelfCall(request),
      keyGenerator: (request) => request.agentId || (request.isAdmin ? 'admin' : `ip:${request.ip}`),
      errorResponseBuilder: (_request, context) => tooMany(`Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`, Math.ceil(context.ttl / 1000)),
    })
  },
  { name: 'rate-limit', fastify: '5.x', dependencies: ['auth', 'problem-json'] },
)
