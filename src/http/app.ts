import { readFileSync } from 'node:fs'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from '../config.js'
import type { DbHandle } from '../db/client.js'
import { wallClock, type Clock } from '../engine/clock.js'
import { createMetrics, type Metrics } from '../metrics.js'
import { createServices, type Services } from '../services.js'
import { auth } from '../agents/auth.js'
import { idempotency } from '../idempotency/plugin.js'
import { unitOfWork } from './plugins/unit-of-work.js'
import { loadShedding, type LoadSheddingOptions } from './plugins/load-shedding.js'
import { requestTimeout } from './plugins/request-timeout.js'
import { httpMetrics } from './plugins/metrics.js'
import { notFound } from './plugins/not-found.js'
import { DOCS_PREFIX, openApi } from './plugins/openapi.js'
import { problemJson, sendFrameworkError } from './plugins/problem-json.js'
import { rateLimiting, SELF_CALL_HEADERS } from './plugins/rate-limit.js'
import { genReqId, REQUEST_ID_HEADER, requestId } from './plugins/request-id.js'
import { serializerFactory } from './serialization.js'
import { rejectUnstorableText, validatorFactory } from './validation.js'
import { asArray } from '../route-hooks.js'
import { useDepthCheckedJson } from '../json-body.js'
import { agentRoutes } from '../agents/routes.js'
import { healthRoutes } from './health-routes.js'
import { sessionGuidanceRoutes } from '../sessions/guidance-routes.js'
import { sessionRoutes } from '../sessions/routes.js'
import { reminderRoutes } from '../reminders/routes.js'
import { hookRoutes } from '../hooks/routes.js'
import { otlpRoutes } from '../otlp/routes.js'
import { webhookRoutes } from '../webhooks/routes.js'
import { mcpRoutes } from '../mcp/routes.js'
import { uiRoutes } from '../ui/plugin.js'

export interface AppDeps {
  config: Config
  handle: DbHandle
  clock?: Clock
  /** false (tests), true (pino at config.logLevel), or a ready logger instance. */
  logger?: boolean | FastifyBaseLogger
  metrics?: Metrics
  /** The dashboard bundle's directory (default: dist/webui, where `npm run build` writes it). */
  uiRoot?: string
  /** When to turn requests away with a 503 (default: near the heap limit). */
  loadShedding?: LoadSheddingOptions
  /** Close `handle` when the app closes, after every other onClose hook (server.ts sets this). */
  closeHandleOnClose?: boolean
}

export type App = FastifyInstance & { services: Services; metrics: Metrics }

export const BODY_LIMIT = 1024 * 1024

/** package.json's version, read once: the OpenAPI document's info.version follows the release. */
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

/**
 * Builds the HTTP app: no listen, no environment reads. Services are constructed here from the
 * deps and handed to route plugins through their options.
 */
export async function buildApp(deps: AppDeps): Promise<App> {
  const clock = deps.clock ?? wallClock
  const metrics = deps.metrics ?? createMetrics()
  const services = createServices({ config: deps.config, handle: deps.handle, clock, metrics })
  const logging = typeof deps.logger === 'object' ? { loggerInstance: deps.logger } : { logger: deps.logger === false ? false : { level: deps.config.logLevel, redact: ['req.headers.authorization'] } }

  const app = Fastify({
    ...logging,
    bodyLimit: BODY_LIMIT,
    // The caller's x-request-id when acceptable, else a UUID; logged as reqId (plugins/request-id.ts).
    genReqId,
    // A bad percent-encoding or an over-long path segment is answered by the router itself.
    frameworkErrors: sendFrameworkError,
    // Bodies are validated strictly, query strings / params / headers with coercion (validation.ts).
    // Each route's validators and serializers are compiled on first use (validation.ts, serialization.ts).
    schemaController: { compilersFactory: { buildValidator: validatorFactory(), buildSerializer: serializerFactory() } },
  }).withTypeProvider<TypeBoxTypeProvider>()

  // onClose hooks run last-added first: added before anything else, this one runs after the
  // scheduler, dispatcher and others have stopped, so they can still use the database.
  if (deps.closeHandleOnClose) app.addHook('onClose', async () => deps.handle.close())

  // Named plugins; each declares the ones it needs before it (fastify-plugin checks at start-up).
  await app.register(problemJson)
  // Bodies nested past MAX_BODY_DEPTH are refused before anything walks them.
  useDepthCheckedJson(app)
  // Routes taking a JSON object body or a query string refuse NUL characters and lone surrogates
  // (validation.ts); /mcp's JSON-RPC body is not one: its tools reach the /v1 routes, which refuse them.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { body?: { type?: unknown }; querystring?: unknown } | undefined
    if (schema?.body?.type === 'object' || schema?.querystring !== undefined) route.preValidation = [rejectUnstorableText, ...asArray(route.preValidation)]
  })
  await app.register(requestId)
  // A request still unanswered after this long is answered 503; the database's own bounds
  // (src/db/postgres.ts) normally answer well before it.
  await app.register(requestTimeout, { ms: deps.config.requestTimeoutMs })
  await app.register(loadShedding, deps.loadShedding ?? {})
  await app.register(httpMetrics, { metrics })
  await app.register(auth, { adminToken: deps.config.adminToken, agents: services.agents, publicPluginPrefixes: [DOCS_PREFIX] })
  // One process on SQLite counts in memory; replicas on PostgreSQL share their counts.
  await app.register(rateLimiting, {
    perMinute: deps.config.rateLimitPerMinute,
    shared: deps.handle.db.dialect === 'postgres' ? deps.handle.db : undefined,
  })
  await app.register(notFound)
  await app.register(openApi, { version: PACKAGE_VERSION })

  await app.register(unitOfWork, { db: deps.handle.db })
  await app.register(idempotency, { service: services.idempotency })

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
  // Coding agents' hooks (Claude Code, Codex CLI, Gemini CLI) on goal sessions.
  await app.register(hookRoutes, { prefix: '/v1', hooks: services.hooks, metrics })
  // Agents that export OpenTelemetry: their spans and log events become steps (src/otlp/).
  await app.register(otlpRoutes, { prefix: '/v1', otlp: services.otlp })
  services.otlp.applier.log(app.log)
  // The agent operations above as MCP tools, each run as its REST route (src/mcp/).
  await app.register(mcpRoutes, {
    version: PACKAGE_VERSION,
    selfCallHeaders: (request) => ({ [REQUEST_ID_HEADER]: request.id, ...SELF_CALL_HEADERS }),
  })
  // The dashboard's files; the page calls the /v1 routes above with the signed-in key.
  await app.register(uiRoutes, deps.uiRoot === undefined ? {} : { root: deps.uiRoot })
  // Other resources register here the same way: app.register(xRoutes, { prefix: '/v1', ...services }),
  // each route declaring config.auth (auth refuses a route without it).

  return Object.assign(app as unknown as FastifyInstance, { services, metrics })
}
