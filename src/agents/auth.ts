import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { forbidden, unauthorized } from '../errors.js'
import { asArray } from '../route-hooks.js'
import type { AgentsService } from './service.js'

/** Who may call a route: the admin token, an agent API key, or anyone. */
type RouteAuth = 'admin' | 'agent' | 'none'
const KINDS: readonly unknown[] = ['admin', 'agent', 'none'] satisfies RouteAuth[]

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated agent on agent routes; '' on admin and public routes. */
    agentId: string
    /** True when the admin token authenticated this request. */
    isAdmin: boolean
  }
  interface FastifyContextConfig {
    /** Required on every route: a route without it fails the app at start-up (see `auth`). */
    auth?: RouteAuth
  }
}

export interface AuthOptions {
  adminToken: string | undefined
  agents: AgentsService
  /**
   * Prefixes of plugins that register routes of their own with no way to declare auth
   * (swagger-ui's page and static assets): their routes count as 'none'. Matched against the
   * prefix the route was registered under, not its URL, so a route added by hand at the same
   * path still needs a declaration.
   */
  publicPluginPrefixes?: string[]
}

const NO_ADMIN_TOKEN = 'Admin routes are disabled because GOALKEEPER_ADMIN_TOKEN is not set. Set it (16+ characters) and restart.'

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (!header) return undefined
  // `Bearer%20…`: OTEL_EXPORTER_OTLP_HEADERS as some exporters send it, not percent-decoded (Claude Code's).
  const match = /^Bearer(?:\s+|%20)(\S+)\s*$/i.exec(header)
  return match?.[1]
}

const sha256 = (s: string) => createHash('sha256').update(s).digest()

/**
 * Authentication declared per route, `config: { auth: 'admin' | 'agent' | 'none' }`: admin routes
 * need the admin token, agent routes an agent API key (sets `request.agentId`). A route registered
 * without a declaration throws here, so the app fails at start-up instead of serving it open.
 *
 * The check is an onRequest hook put first on each admin or agent route (through `onRoute`), so
 * public routes pay nothing and unknown routes fall through to the 404 handler untouched. Register
 * before every route: onRoute sees only routes added after it.
 */
export const auth = fp<AuthOptions>(
  (app, opts, done) => {
    const adminHash = opts.adminToken ? sha256(opts.adminToken) : undefined
    // Hashing both sides gives equal lengths, so the compare is constant-time whatever was sent.
    const isAdminToken = (token: string) => adminHash !== undefined && timingSafeEqual(sha256(token), adminHash)

    app.decorateRequest('agentId', '')
    app.decorateRequest('isAdmin', false)

    const admin = async (request: FastifyRequest): Promise<void> => {
      const token = bearer(request)
      // Without credentials it is a 401 as everywhere; with any, the route is simply off: 403.
      if (!adminHash) throw token ? forbidden(NO_ADMIN_TOKEN) : unauthorized(NO_ADMIN_TOKEN)
      if (token && isAdminToken(token)) {
        request.isAdmin = true
        return
      }
      if (token && (await opts.agents.authenticate(token))) throw forbidden('This call needs the admin token, not an agent API key.')
      throw unauthorized('Missing or invalid admin token.')
    }
    const agent = async (request: FastifyRequest, token: string | undefined): Promise<void> => {
      const agentId = token ? await opts.agents.authenticate(token) : undefined
      if (agentId) {
        request.agentId = agentId
        return
      }
      if (token && isAdminToken(token)) throw forbidden('The admin token manages agents; this call needs an agent API key.')
      throw unauthorized()
    }
    // Callback style, not async: this runs on every request, and a known key (cached) is settled
    // without a promise; only a cache miss waits for the database.
    const agentHook: onRequestHookHandler = (request, _reply, next) => {
      const token = bearer(request)
      const cached = token ? opts.agents.cachedAgent(token) : undefined
      if (cached !== undefined) {
        request.agentId = cached
        return next()
      }
      agent(request, token).then(() => next(), next)
    }
    const adminHook: onRequestHookHandler = (request, _reply, next) => {
      admin(request).then(() => next(), next)
    }
    const hooks = { admin: adminHook, agent: agentHook }

    const prefixes = opts.publicPluginPrefixes ?? []
    const underPublicPlugin = (prefix: string) => prefixes.some((p) => prefix === p || prefix.startsWith(`${p}/`))
    app.addHook('onRoute', (route) => {
      let declared = route.config?.auth
      if (declared === undefined && underPublicPlugin(route.prefix)) {
        declared = 'none'
        route.config = { ...route.config, auth: declared }
      }
      if (!KINDS.includes(declared)) {
        const method = Array.isArray(route.method) ? route.method.join(',') : route.method
        throw new Error(
          `Route ${method} ${route.url} ${declared === undefined ? 'declares no auth' : `declares an unknown auth ${JSON.stringify(declared)}`}: ` +
            "add config: { auth: 'admin' | 'agent' | 'none' } to its options.",
        )
      }
      if (declared === 'none') return
      // First among the route's onRequest hooks: the rate limiter's, added after, keys on the agent.
      route.onRequest = [hooks[declared as 'admin' | 'agent'], ...asArray(route.onRequest)]
    })
    done()
  },
  { name: 'auth', fastify: '5.x', dependencies: ['problem-json'] },
)
