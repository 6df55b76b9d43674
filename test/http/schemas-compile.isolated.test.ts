/**
 * Route validators and response serializers are compiled on first use (src/http/validation.ts,
 * serialization.ts), so a schema that does not compile would show only on its route's first
 * request. This compiles every part Fastify asks for at startup, as that first request would.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { expect, it, vi } from 'vitest'
import { buildTestApp } from '../helpers.js'

type Part = { url: string; method: string; httpPart?: string; httpStatus?: string; schema: unknown }
type Validate = ((data: unknown) => boolean) & { schemaEnv?: unknown }
const seen = vi.hoisted(() => ({ validators: [] as { route: Part; validate: Validate }[], responses: [] as { route: Part; external: unknown; options: unknown }[] }))

vi.mock('../../src/http/validation.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/http/validation.js')>()
  const validatorFactory = () => {
    const factory = real.validatorFactory() as unknown as (external: unknown) => (route: Part) => Validate
    return (external: unknown) => {
      const compile = factory(external)
      return (route: Part) => {
        const validate = compile(route)
        seen.validators.push({ route, validate })
        return validate
      }
    }
  }
  return { ...real, validatorFactory }
})

vi.mock('../../src/http/serialization.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/http/serialization.js')>()
  const serializerFactory = () => {
    const factory = real.serializerFactory() as unknown as (external: unknown, options: unknown) => (route: Part) => unknown
    return (external: unknown, options: unknown) => {
      const compile = factory(external, options)
      return (route: Part) => {
        seen.responses.push({ route, external, options })
        return compile(route)
      }
    }
  }
  return { ...real, serializerFactory }
})

it("every route's request parts and responses compile", async () => {
  const t = await buildTestApp()
  await t.app.ready()
  expect(seen.validators.length).toBeGreaterThan(50)
  expect(seen.responses.length).toBeGreaterThan(50)
  for (const { route, validate } of seen.validators) {
    // Two values, so a body validator meets one it refuses and builds its all-errors twin too.
    const compiles = () => [validate([]), validate({})]
    expect(compiles, `${route.method} ${route.url} ${route.httpPart}`).not.toThrow()
    // As ajv's own functions do: Fastify then hands the validator the parent, so ajv can coerce a root value.
    if (route.httpPart !== 'body') expect(validate.schemaEnv, `${route.method} ${route.url} ${route.httpPart}`).toBeTruthy()
  }
  // Built here as the route's first reply would, with the shared schemas Fastify gave the factory.
  const selector = SerializerSelector()
  for (const { route, external, options } of seen.responses) {
    expect(() => selector(external, options as never)(route as never), `${route.method} ${route.url} ${route.httpStatus}`).not.toThrow()
  }
})
