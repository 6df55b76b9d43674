import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>

/**
 * Fastify's own response serializers (fast-json-stringify), each built on its route's first reply
 * with that status instead of at startup. Problem responses are sent as strings
 * (plugins/problem-json.ts), so their schemas, there for the OpenAPI document, are never compiled;
 * with the validators (validation.ts) that took ~3.5 MB off a server's live heap
 * (docs/performance.md, Memory).
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
