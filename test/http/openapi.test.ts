import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { renderOpenApiYaml, toOpenApiYaml } from '../../scripts/openapi-doc.js'
import { buildTestApp } from '../helpers.js'

interface Parameter {
  name: string
  in: string
  required?: boolean
  schema?: { default?: unknown }
}
type Operation = { parameters?: Parameter[]; responses: Record<string, unknown> }
type Doc = { paths: Record<string, Record<string, Operation>>; [key: string]: unknown }

const committed = () => readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')

async function served(): Promise<Doc> {
  const { app } = await buildTestApp()
  await app.ready()
  // A JSON round trip: what a client of /openapi.json receives, without in-memory extras.
  return JSON.parse(JSON.stringify(app.swagger())) as Doc
}

function operations(doc: Doc): [string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]): [string, Operation] => [`${method.toUpperCase()} ${path}`, op]))
}

it('the committed openapi.yaml matches what the app serves (run `npm run openapi` after changing routes)', async () => {
  expect(committed()).toBe(await renderOpenApiYaml())
})

it('openapi.yaml reads the same to YAML 1.1 parsers (PyYAML, js-yaml 3) as to YAML 1.2 ones: times stay strings', async () => {
  const doc = await served()
  const text = committed()
  expect(parse(text, { version: '1.2' })).toEqual(doc)
  expect(parse(text, { version: '1.1' })).toEqual(doc)
  // The case that bit: an unquoted 22:00 is the integer 1320 in YAML 1.1.
  expect(text).toContain('"22:00"')
  expect(parse('t: 22:00', { version: '1.1' })).toEqual({ t: 1320 })
  const tricky = { t: '22:00', b: 'on', o: '0o17', d: '2026-11-22' }
  for (const version of ['1.1', '1.2'] as const) expect(parse(toOpenApiYaml(tricky), { version })).toEqual(tricky)
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
  const verbs = 'add|check|complete|create|delete|dismiss|get|inject|list|record|reset|retry|revoke|rotate|search|send|set|snooze|start|test|trigger|update'
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
  expect(seen.size).toBe(63)
  expect(seen.get('recordStep')).toBe('POST /v1/sessions/{id}/steps')
})

describe('what third-party tools read', () => {
  it('no parameter with a default is required, in any operation', async () => {
    const doc = await served()
    const offenders = operations(doc).flatMap(([op, { parameters = [] }]) => parameters.filter((p) => p.required === true && p.schema?.default !== undefined).map((p) => `${op} ${p.in} ${p.name}`))
    expect(offenders).toEqual([])
    // The walk sees the parameters it is about: `limit` has its default and is optional.
    const limit = doc.paths['/v1/reminders/due']!.get!.parameters!.find((p) => p.name === 'limit')
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { default: 50 } })
  })

  it('a defaulted query parameter is still filled in when left out', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    for (let i = 0; i < 21; i++) await t.app.services.reminders.create(a.id, { title: `check ${i}`, trigger: { type: 'context', pattern: 'deploy' } })
    const search = await t.app.inject({ url: '/v1/reminders/search?q=check', headers: a.headers })
    expect(search.statusCode).toBe(200)
    expect(search.json().items).toHaveLength(20)
    const page = await t.app.inject({ url: '/v1/reminders?limit=5', headers: a.headers })
    expect(page.json().items).toHaveLength(5)
  })

  it('names a server, a license and a 4xx response on every operation', async () => {
    const doc = await served()
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })])
    expect(doc.info).toMatchObject({ license: { name: 'MIT', identifier: 'MIT' } })
    const without4xx = operations(doc)
      .filter(([, op]) => !Object.keys(op.responses).some((code) => code.startsWith('4')))
      .map(([op]) => op)
    expect(without4xx).toEqual([])
  })

  it('the operations routes document the 400 the router gives for a malformed URL', async () => {
    const { app } = await buildTestApp()
    const res = await app.inject('/healthz%zz')
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toContain('application/problem+json')
    const doc = await served()
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      expect(JSON.stringify(doc.paths[path]!.get!.responses['400'])).toContain('#/components/schemas/Problem')
    }
  })
})
