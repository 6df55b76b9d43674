import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { UI_CSP } from '../../src/ui/plugin.js'
import { buildTestApp } from '../helpers.js'
import { buildUi, removeUi } from './fixtures.js'

/** The dashboard's HTTP side through app.inject: what is served, with which headers, to whom. */
afterAll(removeUi)

describe('GET /ui', () => {
  const app = async () => (await buildTestApp({ uiRoot: buildUi() })).app

  it('serves the page without a key, under a strict Content-Security-Policy, with no inline script', async () => {
    const a = await app()
    for (const url of ['/ui', '/ui/', '/ui/sessions', '/ui/reminders', '/ui/webhooks']) {
      const res = await a.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(200)
      expect(res.headers['content-type']).toMatch(/^text\/html/)
      expect(res.headers['content-security-policy']).toBe(UI_CSP)
      expect(res.headers['set-cookie']).toBeUndefined()
    }
    expect(UI_CSP).toContain("script-src 'self'")
    expect(UI_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/)
    const html = (await a.inject({ method: 'GET', url: '/ui' })).body
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts).toHaveLength(1)
    expect(scripts[0]![1]).toMatch(/src="\/ui\/assets\/app-[A-Z0-9]+\.js"/)
    expect(scripts[0]![2]).toBe('')
    expect(html).not.toMatch(/<style|style=|https?:\/\//)
  })

  it('answers a session page with the same index.html (the script routes it)', async () => {
    const a = await app()
    const index = await a.inject({ method: 'GET', url: '/ui' })
    const page = await a.inject({ method: 'GET', url: '/ui/sessions/ses_0mhx3k2c8Yy6a4pQ1rT9sWb2' })
    expect(page.statusCode).toBe(200)
    expect(page.body).toBe(index.body)
    expect(page.headers['cache-control']).toBe('no-cache')
    expect((await a.inject({ method: 'GET', url: '/ui/nowhere' })).statusCode).toBe(404)
  })

  it('serves the hashed bundle compressed and cacheable, and nothing outside the bundle', async () => {
    const a = await app()
    const html = (await a.inject({ method: 'GET', url: '/ui' })).body
    const js = /src="(\/ui\/assets\/[^"]+)"/.exec(html)![1]!
    const css = /href="(\/ui\/assets\/[^"]+\.css)"/.exec(html)![1]!
    const res = await a.inject({ method: 'GET', url: js, headers: { 'accept-encoding': 'br, gzip' } })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-encoding']).toBe('br')
    expect(res.headers['content-type']).toMatch(/javascript/)
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(res.headers['content-security-policy']).toBe(UI_CSP)
    expect((await a.inject({ method: 'GET', url: css })).headers['content-type']).toMatch(/^text\/css/)
    expect((await a.inject({ method: 'GET', url: '/ui/assets/missing.js' })).statusCode).toBe(404)
    expect((await a.inject({ method: 'GET', url: '/ui/assets/../index.html' })).statusCode).not.toBe(200)
    expect((await a.inject({ method: 'GET', url: '/ui/assets/%2e%2e/%2e%2e/package.json' })).statusCode).toBeGreaterThanOrEqual(400)
  })

  it('stays out of the OpenAPI document', async () => {
    const a = await app()
    const doc = (await a.inject({ method: 'GET', url: '/openapi.json' })).json()
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/ui'))).toEqual([])
  })

  it('says to run the build when the bundle is missing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'goalkeeper-no-ui-'))
    const { app: a } = await buildTestApp({ uiRoot: empty })
    rmSync(empty, { recursive: true })
    const res = await a.inject({ method: 'GET', url: '/ui/sessions' })
    expect(res.statusCode).toBe(503)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json().detail).toMatch(/npm run build/)
  })
})
