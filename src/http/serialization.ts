import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>

/**
 * Fastify's own response serializers (fast-json-stringify), each built on its route's first reply
 * with that status instead of at startup, as the validators are (validation.ts; docs/performance.md,
 * Memory). Problem responses are sent as strings (plugins/problem-json.ts), so their schemas, there
 * for the OpenAPI document, are never compiled.
 */
export function serializerFactory(): SerializerFactory {
  const select = SerializerSelector()
  return (externalSchemas, options) => {
    const compile = select(externalSchemas, options)
    return (route) => {
      let serialize: ((data: unknown) => string) | undefined
      return (data: unknown) => (serialize ??= compile(route))(data)
    }
  }
}
