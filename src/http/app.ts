import { readFileSync } from 'node:fs'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from '../config.js'
import type { DbHandle } from '../db/client.js'
import { wallClock, type Clock } from '../engine/clock.js'
import { tooMany } from '../errors.js'
import { createMetrics, type Metrics } from '../metrics.js'
import { createServices, type Services } from '../services.js'
import { installAuth } from '../agents/auth.js'
import { installErrorHandlers, installNotFoundHandler, sendFrameworkError } from './errors.js'
import { installIdempotency } from '../idempotency/plugin.js'
import { validatorFactory } from './validation.js'
import { agentRoutes } from '../agents/routes.js'
import { healthRoutes } from './health-routes.js'
import { sessionGuidanceRoutes } from '../sessions/guidance-routes.js'
import { sessionRoutes } from '../sessions/routes.js'
import { reminderRoutes } from '../reminders/routes.js'
import { webhookRoutes } from '../webhooks/routes.js'
import { Problem } from '../schemas.js'

export interface AppDeps {
  config: Config
  handle: DbHandle
  clock?: Clock
  /** false (tests), true (pino at config.logLevel), or a ready logger instance. */
  logger?: boolean | FastifyBaseLogger
  metrics?: Metrics
  /** Close `handle` when the app closes, after every other onClose hook (server.ts sets this). */
  closeHandleOnClose?: boolean
}

export type App = FastifyInstance & { services: Services; metrics: Metrics }

export const BODY_LIMIT = 1024 * 1024

/** package.json's version, read once: the OpenAPI document's info.version follows the release. */
export const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

/**
 * Builds the HTTP app: no listen, no environment reads. Services are constructed here from the
 * deps and handed to route plugins through their options.
 */
export async function buildApp(deps: AppDeps): Promise<App> {
  const clock = deps.clock ?? wallClock
  const metrics = deps.metrics ?? createMetrics()
  const services = createServices({ config: deps.config, handle: deps.handle, clock, metrics })
  const logging =
    typeof deps.logger === 'object'
      ? { loggerInstance: deps.logger }
      : { logger: deps.logger === false ? false : { level: deps.config.logLevel, redact: ['req.headers.authorization'] } }

  const app = Fastify({
    ...logging,
    bodyLimit: BODY_LIMIT,
    // A bad percent-encoding or an over-long path segment is answered by the router itself.
    frameworkErrors: sendFrameworkError,
    // Bodies are validated strictly, query strings / params / headers with coercion (validation.ts).
    schemaController: { compilersFactory: { buildValidator: validatorFactory() } },
  }).withTypeProvider<TypeBoxTypeProvider>()

  // onClose hooks run last-added first: added before anything else, this one runs after the
  // scheduler, dispatcher and others have stopped, so they can still use the database.
  if (deps.closeHandleOnClose) app.addHook('onClose', async () => deps.handle.close())
  installErrorHandlers(app)
  app.addSchema(Problem)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'goalkeeper',
        version: PACKAGE_VERSION,
        description: 'Keeps long-running LLM agents on their goal. Errors are RFC 9457 application/problem+json.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Relative: the operations live on whatever origin serves this document, so Swagger UI at
      // /docs calls the server it was loaded from (any host, port or proxy), not a guessed address.
      servers: [{ url: '/', description: 'The server that serves this document' }],
      tags: [
        { name: 'agents', description: 'Admin: agents and API keys' },
        { name: 'operations', description: 'Health, readiness, metrics' },
        { name: 'sessions', description: 'Goal sessions: step verdicts, drift checks, reminders, recitation' },
        { name: 'reminders', description: 'Scheduled, recurring and context-triggered reminders' },
        { name: 'settings', description: 'Per-agent timezone, quiet hours, quota and turn budget' },
        { name: 'turns', description: 'What to inject before the next LLM call' },
        { name: 'webhooks', description: 'Webhook subscriptions and signed delivery (Standard Webhooks v1)' },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An agent API key (gk_…).' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'GOALKEEPER_ADMIN_TOKEN.' },
        },
      },
      security: [{ apiKey: [] }],
    },
    // Keep registered schema names (Problem, …) as component names instead of def-N.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    metrics.httpDuration.observe(
      { method: request.method, route, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    )
    done()
  })

  installAuth(app, { adminToken: deps.config.adminToken, agents: services.agents })
  if (deps.config.rateLimitPerMinute > 0) {
    await app.register(rateLimit, {
      global: true,
      // Route-level onRequest hooks run after the global auth hook, so agentId is known here.
      hook: 'onRequest',
      max: deps.config.rateLimitPerMinute,
      timeWindow: 60_000,
      allowList: (request) => !request.url.startsWith('/v1/'),
      keyGenerator: (request) => request.agentId || (request.isAdmin ? 'admin' : `ip:${request.ip}`),
      errorResponseBuilder: (_request, context) =>
        tooMany(`Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`, Math.ceil(context.ttl / 1000)),
    })
    // Unknown paths count whatever their prefix (the allow list only spares the known operations
    // routes), in their own bucket per caller: on a 404 no auth ran, so that is per IP.
    installNotFoundHandler(app, app.rateLimit({ allowList: () => false }))
  } else {
    installNotFoundHandler(app)
  }
  installIdempotency(app, services.idempotency, deps.handle.sqlite)

  await app.register(healthRoutes, { handle: deps.handle, metrics })
  await app.register(agentRoutes, { prefix: '/v1', agents: services.agents })
  await app.register(sessionRoutes, { prefix: '/v1', sessions: services.sessions })
  await app.register(sessionGuidanceRoutes, { prefix: '/v1', sessions: services.sessions })
  await app.register(reminderRoutes, {
    prefix: '/v1',
    reminders: services.reminders,
    reminderSearch: services.reminderSearch,
    settings: services.settings,
    turns: services.turns,
  })
  await app.register(webhookRoutes, { prefix: '/v1', webhooks: services.webhooks })
  // Other resources register here the same way: app.register(xRoutes, { prefix: '/v1', ...services }).

  return Object.assign(app as unknown as FastifyInstance, { services, metrics })
}
