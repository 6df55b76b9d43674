import type {} from '@fastify/rate-limit'
import fp from 'fastify-plugin'
import { sendNotFound } from './problem-json.js'

/**
 * Unknown routes: a problem+json 404. They get no route-level hooks, so when rate limiting is on
 * (the `rateLimit` decorator exists) the limiter reaches them as this handler's preHandler: unknown
 * paths count whatever their prefix, in their own bucket per caller (per IP: no auth ran).
 */
export const notFound = fp(
  async (app) => {
    const preHandler = app.hasDecorator('rateLimit') ? app.rateLimit({ allowList: () => false }) : undefined
    app.setNotFoundHandler(preHandler ? { preHandler } : {}, sendNotFound)
  },
  { name: 'not-found', fastify: '5.x', dependencies: ['problem-json', 'rate-limit'] },
)
