import rateLimit from '@fastify/rate-limit'
import fp from 'fastify-plugin'
import { tooMany } from '../../errors.js'

/**
 * Per-caller requests per minute on every route not declared `auth: 'none'` (0 turns it off).
 * Keyed on the agent, so it needs auth: auth's onRequest hook is placed first on each route, and
 * this plugin's runs after it, when `agentId` is known.
 */
export const rateLimiting = fp<{ perMinute: number }>(
  async (app, { perMinute }) => {
    if (perMinute <= 0) return
    await app.register(rateLimit, {
      global: true,
      hook: 'onRequest',
      max: perMinute,
      timeWindow: 60_000,
      allowList: (request) => request.routeOptions.config.auth === 'none',
      keyGenerator: (request) => request.agentId || (request.isAdmin ? 'admin' : `ip:${request.ip}`),
      errorResponseBuilder: (_request, context) =>
        tooMany(`Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`, Math.ceil(context.ttl / 1000)),
    })
  },
  { name: 'rate-limit', fastify: '5.x', dependencies: ['auth', 'problem-json'] },
)
