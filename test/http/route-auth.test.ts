import { describe, expect, it, vi } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { buildTestApp } from '../helpers.js'

const ok = async () => ({ ok: true })

describe('auth declared per route', () => {
  it('an admin route outside /v1/agents still needs the admin token', async () => {
    const { app, adminHeaders, createAgent } = await buildTestApp()
    app.get('/v1/reports/usage', { config: { auth: 'admin' } }, ok)
    app.get('/internal/stats', { config: { auth: 'admin' } }, ok)
    const a = await createAgent('a')
    for (const url of ['/v1/reports/usage', '/internal/stats']) {
      const withKey = await app.inject({ url, headers: a.headers })
      expect(withKey.statusCode, url).toBe(403)
      expect(withKey.json().detail).toBe('This call needs the admin token, not an agent API key.')
      expect((await app.inject({ url })).statusCode, url).toBe(401)
      expect((await app.inject({ url, headers: adminHeaders })).json(), url).toEqual({ ok: true })
    }
  })

  it('an admin route anywhere is off (403, 401 without credentials) without GOALKEEPER_ADMIN_TOKEN', async () => {
    const { app, createAgent } = await buildTestApp({ env: { GOALKEEPER_ADMIN_TOKEN: undefined } })
    app.get('/internal/stats', { config: { auth: 'admin' } }, ok)
    const a = await createAgent('a')
    const withKey = await app.inject({ url: '/internal/stats', headers: a.headers })
    expect(withKey.statusCode).toBe(403)
    expect(withKey.json().detail).toContain('GOALKEEPER_ADMIN_TOKEN')
    expect((await app.inject({ url: '/internal/stats' })).statusCode).toBe(401)
  })

  it('agent and public routes follow their declaration, not their path', async () => {
    const { app, adminHeaders, createAgent } = await buildTestApp()
    app.get('/elsewhere/whoami', { config: { auth: 'agent' } }, async (request) => ({ agent_id: request.agentId }))
    app.get('/v1/open', { config: { auth: 'none' } }, ok)
    const a = await createAgent('a')
    expect((await app.inject({ url: '/elsewhere/whoami', headers: a.headers })).json()).toEqual({ agent_id: a.id })
    expect((await app.inject({ url: '/elsewhere/whoami' })).statusCode).toBe(401)
    expect((await app.inject({ url: '/elsewhere/whoami', headers: adminHeaders })).statusCode).toBe(403)
    expect((await app.inject({ url: '/v1/open' })).json()).toEqual({ ok: true })
  })

  it('a route without a declaration (or with an unknown one) is refused when it is added', async () => {
    const { app } = await buildTestApp()
    expect(() => app.post('/v1/things', ok)).toThrow("Route POST /v1/things declares no auth: add config: { auth: 'admin' | 'agent' | 'none' } to its options.")
    // @ts-expect-error: not one of the three kinds
    expect(() => app.get('/v1/other', { config: { auth: 'public' } }, ok)).toThrow(/GET \/v1\/other declares an unknown auth "public"/)
    // Only routes swagger-ui registers itself under /docs count as public; one added by hand there does not.
    expect(() => app.get('/docs/extra', ok)).toThrow(/GET \/docs\/extra declares no auth/)
  })

  it('buildApp fails at start-up when a route plugin registers an undeclared route', async () => {
    vi.resetModules()
    vi.doMock('../../src/http/health-routes.js', async (importOriginal) => {
      const original = await importOriginal<typeof import('../../src/http/health-routes.js')>()
      return {
        healthRoutes: async (...args: Parameters<typeof original.healthRoutes>) => {
          await original.healthRoutes(...args)
          args[0].get('/v1/forgotten', ok)
        },
      }
    })
    try {
      const { buildApp } = await import('../../src/http/app.js')
      const handle = openDb(':memory:')
      runMigrations(handle)
      try {
        await expect(buildApp({ config: loadConfig({ GOALKEEPER_DB: ':memory:' }), handle, logger: false })).rejects.toThrow(/Route GET \/v1\/forgotten declares no auth/)
      } finally {
        await handle.close()
      }
    } finally {
      vi.doUnmock('../../src/http/health-routes.js')
      vi.resetModules()
    }
  })
})
