import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { DbHandle } from '../db/client.js'
import type { Metrics } from '../metrics.js'
import { ProblemRef } from '../schemas.js'

const Status = Type.Object({ status: Type.String(), checks: Type.Optional(Type.Record(Type.String(), Type.Boolean())) })
/**
 * These routes take no input, so the one client error they give is the router's own: a malformed
 * URL (a bad percent-encoding such as `/healthz%zz`) is a 400 before any route runs.
 */
const badUrl = {
  400: { description: 'Malformed request URL (problem+json).', content: { 'application/problem+json': { schema: ProblemRef } } },
}

/** Operations endpoints: no auth, no rate limit. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ handle: DbHandle; metrics: Metrics }> = async (app, { handle, metrics }) => {
  app.get(
    '/healthz',
    { config: { auth: 'none' }, schema: { operationId: 'getHealth', tags: ['operations'], security: [], summary: 'The process is up.', response: { 200: Status, ...badUrl } } },
    async () => ({ status: 'ok' }),
  )

  app.get(
    '/readyz',
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'getReadiness',
        tags: ['operations'],
        security: [],
        summary: 'The database is reachable and every migration is applied.',
        response: { 200: Status, 503: Status, ...badUrl },
      },
    },
    async (_request, reply) => {
      let database = false
      try {
        database = (await handle.db.get('SELECT 1 AS ok')) !== undefined
      } catch {
        database = false
      }
      const migrations = database && (await handle.migrated())
      const ready = database && migrations
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks: { database, migrations } })
    },
  )

  app.get(
    '/metrics',
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'getMetrics',
        tags: ['operations'],
        security: [],
        summary: 'Prometheus metrics.',
        produces: ['text/plain'],
        response: { 200: { description: 'Prometheus text exposition format.', content: { 'text/plain': { schema: Type.String() } } }, ...badUrl },
      },
    },
    async (_request, reply) => {
      const body = await metrics.registry.metrics()
      return reply.type(metrics.registry.contentType).send(body)
    },
  )
}
