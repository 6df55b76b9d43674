import { expect, it, vi } from 'vitest'
import { buildTestApp } from '../helpers.js'
import { createSession } from './sessions-fixtures.js'

// Counts the response serializers fast-json-stringify builds, as Fastify's own selector does them.
const built = vi.hoisted(() => [] as string[])
vi.mock('@fastify/fast-json-stringify-compiler', async (importOriginal) => {
  const real = await importOriginal<typeof import('@fastify/fast-json-stringify-compiler')>()
  const SerializerSelector = () => {
    const select = real.SerializerSelector()
    return (externalSchemas?: unknown, options?: Parameters<typeof select>[1]) => {
      const compile = select(externalSchemas, options)
      return (route: Parameters<typeof compile>[0]) => {
        built.push(`${route.method} ${route.url} ${route.httpStatus}`)
        return compile(route)
      }
    }
  }
  return { ...real, SerializerSelector, default: { ...real, SerializerSelector } }
})

it("response serializers are built on a route's first reply with that status, once, and never for a problem response", async () => {
  const t = await buildTestApp()
  await t.app.ready()
  expect(built).toEqual([])

  const a = await t.createAgent()
  const id = await createSession(t, a)
  expect(built).toContain('POST /v1/sessions 201')
  const step = { method: 'POST' as const, url: `/v1/sessions/${id}/steps`, headers: a.headers }
  for (let i = 0; i < 3; i++) expect((await t.app.inject({ ...step, payload: { description: `design the schema ${i}` } })).statusCode).toBe(201)
  const refused = await t.app.inject({ ...step, payload: { description: 5 } })
  expect(refused.statusCode).toBe(400)
  expect(refused.json()).toMatchObject({ status: 400 })

  const stepRoute = built.filter((b) => b.startsWith('POST /v1/sessions/:id/steps'))
  expect(stepRoute).toEqual(['POST /v1/sessions/:id/steps 201'])
  expect(built.filter((b) => / 4\d\d$/.test(b))).toEqual([])
})
