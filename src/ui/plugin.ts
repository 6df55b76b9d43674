import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { AppError } from '../errors.js'

/** Where the dashboard is served. */
const UI_PREFIX = '/ui'

/**
 * Where `npm run build` puts the browser bundle (ui/build.mjs). The same path from src/ui (tsx)
 * and from dist/ui (the build), both two levels under the project root.
 */
const DEFAULT_UI_ROOT = fileURLToPath(new URL('../../dist/webui/', import.meta.url))

/**
 * Everything the page loads comes from this origin: scripts and styles only as files (no inline
 * script or style element, no CDN), data only from /v1 on the same origin, and no framing.
 */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** The single-page app's pages: each answers with index.html, and the script draws the page. */
const PAGES = ['', '/', '/sessions', '/sessions/:id', '/reminders', '/webhooks']

export interface UiOptions {
  /** The built bundle's directory (default DEFAULT_UI_ROOT). */
  root?: string
}

/**
 * The dashboard under /ui: the built files through `@fastify/static` (its reply.sendFile, with
 * pre-compressed .br/.gz variants), served by our own routes so each declares `auth: 'none'` and
 * stays out of the OpenAPI document. The page signs in with an agent API key and calls /v1 itself.
 */
export const uiRoutes: FastifyPluginAsync<UiOptions> = async (app, opts) => {
  const root = opts.root ?? DEFAULT_UI_ROOT
  const built = existsSync(`${root}/index.html`)
  if (built) await app.register(fastifyStatic, { root, serve: false, preCompressed: true })

  app.addHook('onRequest', async (_request, reply) => {
    reply.headers({
      'content-security-policy': UI_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
    })
  })

  const notBuilt = () => new AppError(503, 'ui_not_built', 'The dashboard has not been built: run `npm run build`.')
  const index = async (_request: unknown, reply: FastifyReply) => {
    if (!built) throw notBuilt()
    // The page itself is never cached: it names the current hashed bundle.
    return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false })
  }
  const route = { config: { auth: 'none' as const }, schema: { hide: true } }
  for (const page of PAGES) app.get(`${UI_PREFIX}${page}`, route, index)

  app.get<{ Params: { '*': string } }>(`${UI_PREFIX}/assets/*`, route, async (request, reply) => {
    if (!built) throw notBuilt()
    // File names carry a content hash (ui/build.mjs): a name is never reused for other bytes.
    return reply.sendFile(`assets/${request.params['*']}`, { maxAge: 365 * 24 * 3600 * 1000, immutable: true })
  })
}
