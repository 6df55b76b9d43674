import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler'
import type { FastifySchemaCompiler } from 'fastify'

/** The most field errors one 400 reports, so a huge bad body cannot amplify into a huge reply. */
export const MAX_FIELD_ERRORS = 20

/**
 * Bodies with more JSON values than this report only their first error. ajv's allErrors has no
 * cap: a 1 MB array of wrong scalars took ~180 ms and built 500k error objects, against ~0.1 ms
 * stopping at the first. Counting stops at the limit, so the check costs at most this many steps.
 */
export const MAX_ALL_ERRORS_NODES = 10_000

/** ajv options shared by every part of a request. */
const SHARED = {
  // Unknown body fields are rejected (Body() sets additionalProperties: false), never silently dropped.
  removeAdditional: false,
  useDefaults: true,
} as const

/** A JSON body is already typed: `{"goal": 5}` must fail, not become "5". */
export const BODY_AJV_OPTIONS = { ...SHARED, coerceTypes: false, allErrors: false } as const
/** Re-validates a failed body (small enough) to report every problem, not just the first. */
export const BODY_ALL_ERRORS_AJV_OPTIONS = { ...SHARED, coerceTypes: false, allErrors: true } as const
/**
 * Query strings, path params and headers arrive as strings: `?limit=10`, repeated keys → arrays.
 * They fit in Node's 16 KB header limit, so collecting every error is cheap.
 */
export const STRING_AJV_OPTIONS = { ...SHARED, coerceTypes: 'array', allErrors: true } as const

type RouteSchema = Parameters<FastifySchemaCompiler<unknown>>[0]
type AjvValidate = ((data: unknown) => boolean) & { errors?: unknown[] | null }
type Compile = (route: RouteSchema) => AjvValidate

/** True when `data` holds at most `limit` JSON values; stops counting past the limit. */
export function hasAtMostNodes(data: unknown, limit: number): boolean {
  const stack: unknown[] = [data]
  let seen = 0
  while (stack.length > 0) {
    if (++seen > limit) return false
    const v = stack.pop()
    if (Array.isArray(v)) for (const x of v) stack.push(x)
    else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) stack.push(x)
  }
  return true
}

/**
 * Valid bodies (the hot path) run one first-error validator, as before; a failed body that is
 * small enough runs the all-errors one to list every problem. Both are compiled up front.
 */
function bodyValidator(first: AjvValidate, all: AjvValidate): AjvValidate {
  const validate: AjvValidate = (data) => {
    if (first(data)) {
      validate.errors = null
      return true
    }
    validate.errors = hasAtMostNodes(data, MAX_ALL_ERRORS_NODES) && !all(data) ? all.errors : first.errors
    return false
  }
  return validate
}

/**
 * ajv coerces "1e400" or "Infinity" in a query string to ±Infinity and then skips `minimum` and
 * `maximum` (its generated code checks bounds only for finite numbers), so `?limit=1e400`
 * reached SQLite and failed there, a 500. String parts are flat (a value or an array of values),
 * so one pass over them after a successful check refuses any non-finite number.
 */
function finiteOnly(validate: AjvValidate): AjvValidate {
  const wrapped = ((data: unknown, ctx?: unknown) => {
    if (!(validate as (d: unknown, c?: unknown) => boolean)(data, ctx)) {
      wrapped.errors = validate.errors
      return false
    }
    const bad = nonFiniteKey(data)
    wrapped.errors = bad === undefined ? null : [{ instancePath: `/${bad}`, schemaPath: '#', keyword: 'finite', params: {}, message: 'must be a finite number' }]
    return bad === undefined
  }) as AjvValidate
  // Fastify hands ajv the parent (to coerce a root value) only to functions carrying schemaEnv.
  Object.assign(wrapped, { schemaEnv: (validate as { schemaEnv?: unknown }).schemaEnv })
  return wrapped
}

function nonFiniteKey(data: unknown): string | undefined {
  if (data === null || typeof data !== 'object') return undefined
  for (const [k, v] of Object.entries(data)) {
    if (typeof v === 'number' && !Number.isFinite(v)) return k
    if (Array.isArray(v) && v.some((x) => typeof x === 'number' && !Number.isFinite(x))) return k
  }
  return undefined
}

/**
 * A Fastify validator factory: strict ajv instances for bodies, a coercing one for everything
 * else. Fastify calls it once per encapsulation context that adds schemas and compiles each route
 * part once at startup; @fastify/ajv-compiler pools the ajv instances by (external schemas,
 * options) and returns the already-compiled function for a repeated `$id`.
 */
export function validatorFactory(): ValidatorFactory {
  const firstPool = AjvCompiler()
  const allPool = AjvCompiler()
  const coercingPool = AjvCompiler()
  // The pools' declared return type is ajv's compile(schema); at run time it takes Fastify's
  // route definition, hence the casts.
  const factory = (externalSchemas: Record<string, never>) => {
    const first = firstPool(externalSchemas, { customOptions: BODY_AJV_OPTIONS }) as unknown as Compile
    const all = allPool(externalSchemas, { customOptions: BODY_ALL_ERRORS_AJV_OPTIONS }) as unknown as Compile
    const other = coercingPool(externalSchemas, { customOptions: STRING_AJV_OPTIONS }) as unknown as Compile
    // Non-body parts are returned unwrapped: Fastify passes a parent to functions with `schemaEnv`
    // so ajv can coerce a root value.
    return (route: RouteSchema) => (route.httpPart === 'body' ? bodyValidator(first(route), all(route)) : finiteOnly(other(route)))
  }
  return factory as unknown as ValidatorFactory
}
