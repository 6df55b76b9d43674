import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { start } from '../../src/server.js'
import { buildTestApp, TEST_ADMIN_TOKEN } from '../helpers.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tempDb = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gk-http-'))
  dirs.push(dir)
  return join(dir, 'gk.db')
}

describe('operations', () => {
  it('healthz is up; readyz is 503 on an unmigrated database and 200 once migrated', async () => {
    const fresh = await buildTestApp({ migrate: false })
    expect((await fresh.app.inject('/healthz')).json()).toEqual({ status: 'ok' })
    const notReady = await fresh.app.inject('/readyz')
    expect(notReady.statusCode).toBe(503)
    expect(notReady.json()).toEqual({ status: 'unavailable', checks: { database: true, migrations: false } })

    const migrated = await buildTestApp()
    const ready = await migrated.app.inject('/readyz')
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toEqual({ status: 'ready', checks: { database: true, migrations: true } })
  })

  it('readyz is 503 when the database is gone', async () => {
    const { app, handle } = await buildTestApp()
    await handle.db.close()
    const res = await app.inject('/readyz')
    expect(res.statusCode).toBe(503)
    expect(res.json().checks.database).toBe(false)
    handle.close = async () => {} // already closed
  })

  it('metrics expose the request histogram by route, method and status, per app instance', async () => {
    const one = await buildTestApp()
    const two = await buildTestApp()
    await one.app.inject({ url: '/v1/agents', headers: one.adminHeaders })
    await one.app.inject({ url: '/v1/agents' })
    one.app.metrics.verdicts.inc({ action: 'continue' })
    const text = (await one.app.inject('/metrics')).body
    expect(text).toContain('# TYPE goalkeeper_http_request_duration_seconds histogram')
    expect(text).toMatch(/goalkeeper_http_request_duration_seconds_count\{method="GET",route="\/v1\/agents",status_code="200"\} 1/)
    expect(text).toMatch(/goalkeeper_http_request_duration_seconds_count\{method="GET",route="\/v1\/agents",status_code="401"\} 1/)
    expect(text).toContain('goalkeeper_step_verdicts_total{action="continue"} 1')
    const other = (await two.app.inject('/metrics')).body
    expect(other).not.toContain('route="/v1/agents"')
  })

  it('serves the OpenAPI 3.1 document and the Swagger UI', async () => {
    const { app } = await buildTestApp()
    const doc = (await app.inject('/openapi.json')).json()
    expect(doc.openapi).toBe('3.1.0')
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz', '/metrics', '/v1/agents', '/v1/agents/{agent_id}']))
    expect(doc.components.schemas.Problem).toBeDefined()
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(JSON.stringify(doc.paths['/v1/agents'].post.responses['4XX'])).toContain('#/components/schemas/Problem')
    const ui = await app.inject('/docs/')
    expect(ui.statusCode).toBe(200)
    expect(ui.headers['content-type']).toMatch(/text\/html/)
  })

  it('GET / redirects to the API docs, needs no credentials and is not in the OpenAPI document', async () => {
    const { app } = await buildTestApp()
    const res = await app.inject('/')
    expect(res.statusCode).toBe(302)
    expect(res.headers.location).toBe('/docs')
    expect((await app.inject(res.headers.location!)).statusCode).toBe(200)
    const doc = (await app.inject('/openapi.json')).json()
    expect(Object.keys(doc.paths)).not.toContain('/')
  })

  it('keys survive a restart on the same database file', async () => {
    const path = tempDb()
    const open = () => {
      const handle = openDb(path)
      runMigrations(handle)
      return handle
    }
    const first = await buildTestApp({ handle: open() })
    const a = await first.createAgent('durable')
    await first.app.close()
    await first.handle.close()

    const second = await buildTestApp({ handle: open() })
    expect(await second.app.services.agents.authenticate(a.apiKey)).toBe(a.id)
    const list = (await second.app.inject({ url: '/v1/agents', headers: second.adminHeaders })).json()
    expect(list.items.map((x: { id: string }) => x.id)).toEqual([a.id])
  })

  it('starts a real listener the way server.ts does and serves over TCP', async () => {
    const app = await start({ GOALKEEPER_DB: tempDb(), PORT: '0', LOG_LEVEL: 'silent', GOALKEEPER_ADMIN_TOKEN: TEST_ADMIN_TOKEN })
    try {
      const address = app.server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      expect(port).toBeGreaterThan(0)
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
      expect(ready.status).toBe(200)
      const created = await fetch(`http://127.0.0.1:${port}/v1/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'over-tcp' }),
      })
      expect(created.status).toBe(201)
    } finally {
      await app.close()
    }
  })
})
