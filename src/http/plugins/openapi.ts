import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'

/** Where Swagger UI is served; `GET /` leads there. */
export const DOCS_PREFIX = '/docs'

/**
 * The OpenAPI document (collected from the routes' schemas, so registered before any route), Swagger
 * UI under DOCS_PREFIX, the document as JSON at /openapi.json, and `GET /` redirecting to the UI.
 * After auth, so its onRoute check sees these routes too (swagger-ui's own count as 'none', see
 * `publicPluginPrefixes` in src/agents/auth.ts).
 */
export const openApi = fp<{ version: string }>(
  async (app, { version }) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'goalkeeper',
          version,
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
          { name: 'mcp', description: 'The agent operations as Model Context Protocol tools, for MCP clients' },
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
    await app.register(swaggerUi, { routePrefix: DOCS_PREFIX })
    app.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger())
    app.get('/', { config: { auth: 'none' }, schema: { hide: true } }, async (_request, reply) => reply.redirect(DOCS_PREFIX, 302))
  },
  { name: 'openapi', fastify: '5.x', dependencies: ['problem-json', 'auth'] },
)
