import fp from 'fastify-plugin'
import type { Metrics } from '../../metrics.js'

/** Request latency by route template, method and status code (served by GET /metrics). */
export const httpMetrics = fp<{ metrics: Metrics }>(
  (app, { metrics }, done) => {
    app.addHook('onResponse', (request, reply, next) => {
      const route = request.routeOptions.url ?? 'unmatched'
      metrics.httpDuration.observe({ method: request.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000)
      next()
    })
    done()
  },
  { name: 'metrics', fastify: '5.x' },
)
