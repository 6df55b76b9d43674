import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { forbidden, unauthorized } from '../errors.js'
import type { AgentsService } from './service.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated agent on agent routes; '' on admin and public routes. */
    agentId: string
    /** True when the admin token authenticated this request. */
    isAdmin: boolean
  }
  interface FastifyContextConfig {
    /** Create endpoints: honour `Idempotency-Key` (see src/idempotency/plugin.ts). */
    idempotent?: boolean
  }
}

/** Admin-only paths; every other `/v1` path needs an agent API key. */
export const ADMIN_PREFIX = '/v1/agents'

const NO_ADMIN_TOKEN =
  'Admin routes are disabled because GOALKEEPER_ADMIN_TOKEN is not set. Set it (16+ characters) and restart.'

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (!header) return undefined
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match?.[1]
}

const sha256 = (s: string) => createHash('sha256').update(s).digest()

/**
 * Authenticates every `/v1` route by its path: `/v1/agents*` needs the admin token, the rest an
 * agent key (sets `request.agentId`). Unknown routes fall through to the 404 handler untouched.
 */
export function installAuth(app: FastifyInstance, opts: { adminToken: string | undefined; agents: AgentsService }): void {
  const adminHash = opts.adminToken ? sha256(opts.adminToken) : undefined
  // Hashing both sides gives equal lengths, so the compare is constant-time whatever was sent.
  const isAdminToken = (token: string) => adminHash !== undefined && timingSafeEqual(sha256(token), adminHash)

  app.decorateRequest('agentId', '')
  app.decorateRequest('isAdmin', false)

  const authenticate = (request: FastifyRequest): void => {
    const route = request.routeOptions.url
    if (!route || !route.startsWith('/v1/')) return
    const token = bearer(request)
    if (route === ADMIN_PREFIX || route.startsWith(`${ADMIN_PREFIX}/`)) {
      // Without credentials it is a 401 as everywhere; with any, the route is simply off: 403.
      if (!adminHash) throw token ? forbidden(NO_ADMIN_TOKEN) : unauthorized(NO_ADMIN_TOKEN)
      if (token && isAdminToken(token)) {
        request.isAdmin = true
        return
      }
      if (token && opts.agents.authenticate(token)) throw forbidden('This call needs the admin token, not an agent API key.')
      throw unauthorized('Missing or invalid admin token.')
    }
    const agentId = token ? opts.agents.authenticate(token) : undefined
    if (agentId) {
      request.agentId = agentId
      return
    }
    if (token && isAdminToken(token)) throw forbidden('The admin token manages agents; this call needs an agent API key.')
    throw unauthorized()
  }
  // Callback style, not async: this runs on every request, and a promise per hook is measurable.
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      authenticate(request)
      done()
    } catch (err) {
      done(err as Error)
    }
  })
}
