import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { renderOpenApiYaml } from '../../scripts/openapi-doc.js'
import { buildTestApp } from '../helpers.js'

it('the committed openapi.yaml matches what the app serves (run `npm run openapi` after changing routes)', async () => {
  const committed = readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')
  expect(committed).toBe(await renderOpenApiYaml())
})

it('info.version is the package version', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  const { app } = await buildTestApp()
  const res = await app.inject({ method: 'GET', url: '/openapi.json' })
  expect(res.json()).toMatchObject({ info: { title: 'goalkeeper', version } })
})

it('every operation has a unique camelCase operationId starting with a verb (client method names)', async () => {
  const { app } = await buildTestApp()
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { operationId?: string }>> }
  const methods = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'])
  const verbs = 'add|check|complete|create|delete|dismiss|get|inject|list|record|reset|retry|revoke|rotate|search|set|snooze|start|test|trigger|update'
  const camelVerbFirst = new RegExp(`^(${verbs})([A-Z][a-z0-9]*)*$`)
  const seen = new Map<string, string>()
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!methods.has(method)) continue
      const where = `${method.toUpperCase()} ${path}`
      expect(operation.operationId, where).toMatch(camelVerbFirst)
      expect(seen.get(operation.operationId!), `${where} reuses the operationId of`).toBeUndefined()
      seen.set(operation.operationId!, where)
    }
  }
  expect(seen.size).toBe(53)
  expect(seen.get('recordStep')).toBe('POST /v1/sessions/{id}/steps')
})
