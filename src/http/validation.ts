import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler'
import type { FastifySchemaCompiler } from 'fastify'

/** The most field errors one 400 reports, so a huge bad body cannot amplify into a huge reply. */
export const MAX_FIELD_ERRORS = 20

/** ajv options shared by every part of a request. */
const SHARED = {
  // Unknown body fields are rejected (Body() sets additionalProperties: false), never silently dropped.
  removeAdditional: false,
  useDefaults: true,
  // Every problem in the failing part is reported, not just the first (the reply is capped).
  allErrors: true,
} as const

/** A JSON body is already typed: `{"goal": 5}` must fail, not become "5". */
export const BODY_AJV_OPTIONS = { ...SHARED, coerceTypes: false } as const
/** Query strings, path params and headers arrive as strings: `?limit=10`, repeated keys → arrays. */
export const STRING_AJV_OPTIONS = { ...SHARED, coerceTypes: 'array' } as const

type RouteSchema = Parameters<FastifySchemaCompiler<unknown>>[0]
type Compile = (route: RouteSchema) => ReturnType<FastifySchemaCompiler<unknown>>

/**
 * A Fastify validator factory with two ajv instances: a strict one for bodies and a coercing one
 * for everything else. Fastify calls it once per encapsulation context that adds schemas and then
 * compiles each route part once at startup; @fastify/ajv-compiler pools the ajv instances by
 * (external schemas, options), and returns an already-compiled function for a repeated `$id`.
 * The compiled ajv function is returned as is (not wrapped) so Fastify still sees its `errors`
 * and `schemaEnv`.
 */
export function validatorFactory(): ValidatorFactory {
  const strictPool = AjvCompiler()
  const coercingPool = AjvCompiler()
  // The pools' declared return type is ajv's compile(schema); at run time it takes Fastify's
  // route definition, hence the casts.
  const factory = (externalSchemas: Record<string, never>) => {
    const body = strictPool(externalSchemas, { customOptions: BODY_AJV_OPTIONS }) as unknown as Compile
    const other = coercingPool(externalSchemas, { customOptions: STRING_AJV_OPTIONS }) as unknown as Compile
    return (route: RouteSchema) => (route.httpPart === 'body' ? body(route) : other(route))
  }
  return factory as unknown as ValidatorFactory
}
