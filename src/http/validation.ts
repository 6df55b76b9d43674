import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler'
import type { Ajv } from 'ajv'
import type { FastifySchemaCompiler, preValidationHookHandler } from 'fastify'
import { parseInstant } from '../engine/clock.js'
import { invalidField } from '../errors.js'
import { JSON_LIMITS_KEYWORD, type JsonLimits } from '../schemas.js'
import { mendText } from '../text-mend.js'

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
const BODY_AJV_OPTIONS = { ...SHARED, coerceTypes: false, allErrors: false } as const
/** Re-validates a failed body (small enough) to report every problem, not just the first. */
const BODY_ALL_ERRORS_AJV_OPTIONS = { ...SHARED, coerceTypes: false, allErrors: true } as const
/**
 * Query strings, path params and headers arrive as strings: `?limit=10`, repeated keys → arrays.
 * They fit in Node's 16 KB header limit, so collecting every error is cheap.
 */
const STRING_AJV_OPTIONS = { ...SHARED, coerceTypes: 'array', allErrors: true } as const

/**
 * `format: 'date-time'` is the service's one rule for instants (clock.ts `parseInstant`) rather
 * than ajv-formats' regex, so a value the schema lets through is one the service can read (and
 * every value it could read before still passes), and a bad one is a 400 at its path.
 */
function instantFormat(ajv: Ajv): void {
  ajv.addFormat('date-time', { type: 'string', validate: (value: string) => parseInstant(value) !== undefined })
}

/**
 * What `value` breaks of `limits`, if anything: its depth and keys (at every level) counted
 * without recursion, stopping at the first limit passed, then the bytes of its JSON text (safe to
 * serialise once the depth is known).
 */
function jsonLimitBreach(value: unknown, limits: JsonLimits): string | undefined {
  const stack: [unknown, number][] = [[value, 1]]
  let keys = 0
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (typeof v !== 'object' || v === null) continue
    if (depth > limits.depth) return `must not nest more than ${limits.depth} levels deep`
    const children = Array.isArray(v) ? v : Object.values(v)
    if (!Array.isArray(v) && (keys += children.length) > limits.keys) return `must not have more than ${limits.keys} keys, counting nested ones`
    for (const c of children) stack.push([c, depth + 1])
  }
  if (Buffer.byteLength(JSON.stringify(value)) > limits.bytes) return `must not be more than ${limits.bytes} bytes of JSON`
  return undefined
}

/** The `x-json-limits` keyword of JsonObjectInput (src/schemas.ts): a value past its limits fails at its own path. */
function jsonLimitsKeyword(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: JSON_LIMITS_KEYWORD,
    schemaType: 'object',
    errors: true,
    validate: function check(limits: JsonLimits, data: unknown) {
      const message = jsonLimitBreach(data, limits)
      ;(check as { errors?: unknown[] }).errors = message === undefined ? [] : [{ keyword: JSON_LIMITS_KEYWORD, message, params: { limits } }]
      return message === undefined
    },
  })
}

/** What every ajv instance here knows besides the standard: instants and JSON limits. */
function extendAjv(ajv: Ajv): void {
  instantFormat(ajv)
  jsonLimitsKeyword(ajv)
}

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
 * Valid bodies (the hot path) run one first-error validator; a failed body that is small enough
 * runs the all-errors one to list every problem. Each is compiled when first needed: the
 * all-errors one only for a route that has refused a body.
 */
function bodyValidator(compileFirst: () => AjvValidate, compileAll: () => AjvValidate): AjvValidate {
  let first: AjvValidate | undefined
  let all: AjvValidate | undefined
  const validate: AjvValidate = (data) => {
    first ??= compileFirst()
    if (first(data)) {
      validate.errors = null
      return true
    }
    if (!hasAtMostNodes(data, MAX_ALL_ERRORS_NODES)) {
      validate.errors = first.errors
      return false
    }
    all ??= compileAll()
    validate.errors = all(data) ? first.errors : all.errors
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
function finiteOnly(compile: () => AjvValidate): AjvValidate {
  let validate: AjvValidate | undefined
  const wrapped = ((data: unknown, ctx?: unknown) => {
    validate ??= compile()
    if (!(validate as (d: unknown, c?: unknown) => boolean)(data, ctx)) {
      wrapped.errors = validate.errors
      return false
    }
    const bad = nonFiniteKey(data)
    wrapped.errors = bad === undefined ? null : [{ instancePath: `/${bad}`, schemaPath: '#', keyword: 'finite', params: {}, message: 'must be a finite number' }]
    return bad === undefined
  }) as AjvValidate
  // Fastify hands a validator the parent (so ajv can coerce a root value) only when the function
  // carries schemaEnv, as every ajv-compiled one does; this one is compiled later, so it says so now.
  Object.assign(wrapped, { schemaEnv: true })
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
 * else. Fastify calls it once per encapsulation context that adds schemas, and asks it for each
 * route part at startup; each part is compiled on its first request instead, since most routes of a
 * running server see few requests (with the serializers, serialization.ts: docs/performance.md,
 * Memory). @fastify/ajv-compiler pools the ajv instances by (external schemas, options) and returns
 * the already-compiled function for a repeated `$id`.
 */
export function validatorFactory(): ValidatorFactory {
  const firstPool = AjvCompiler()
  const allPool = AjvCompiler()
  const coercingPool = AjvCompiler()
  // The pools' declared return type is ajv's compile(schema); at run time it takes Fastify's
  // route definition, hence the casts.
  const factory = (externalSchemas: Record<string, never>) => {
    const first = firstPool(externalSchemas, { customOptions: BODY_AJV_OPTIONS, onCreate: extendAjv }) as unknown as Compile
    const all = allPool(externalSchemas, { customOptions: BODY_ALL_ERRORS_AJV_OPTIONS, onCreate: extendAjv }) as unknown as Compile
    const other = coercingPool(externalSchemas, { customOptions: STRING_AJV_OPTIONS, onCreate: extendAjv }) as unknown as Compile
    return (route: RouteSchema) =>
      route.httpPart === 'body'
        ? bodyValidator(
            () => first(route),
            () => all(route),
          )
        : finiteOnly(() => other(route))
  }
  return factory as unknown as ValidatorFactory
}

/** One ajv error, as Fastify hands it to the error handler. */
export interface AjvIssue {
  instancePath: string
  schemaPath: string
  keyword: string
  message?: string
  params: Record<string, unknown>
}

const shown = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))
const oneOfMessage = (values: unknown[]) => `must be one of: ${[...new Set(values.map(shown))].join(', ')}`
const isChildOf = (path: string, parent: string) => path.startsWith(`${parent}/`) && !path.includes('/', parent.length + 1)

/**
 * Folds ajv's report of a failed union into what a client can act on. TypeBox writes a union of
 * literals as anyOf of const, and ajv reports one "must be equal to constant" per branch plus
 * "must match a schema in anyOf"; that becomes one issue naming the allowed values. A union of
 * objects told apart by one literal field (a trigger's `type`) becomes one such issue on that
 * field when no branch matched it, or the issues of the branch it matched; a non-null value that
 * fails Nullable(X) gets X's issues without "must be null"; branches that all give one reason
 * give it once; other failed unions lose repeats.
 * `enum` and other `const` issues name their values too. It reads only ajv's output
 * (params.allowedValue), so nothing is compiled per request; one pass, plus a walk back over
 * each failed union's branches.
 */
export function foldUnions(issues: readonly AjvIssue[]): AjvIssue[] {
  const out: AjvIssue[] = []
  for (const issue of issues) {
    if (issue.keyword !== 'anyOf') {
      if (issue.keyword === 'enum') out.push({ ...issue, message: oneOfMessage(issue.params.allowedValues as unknown[]) })
      else if (issue.keyword === 'const') out.push({ ...issue, message: `must be equal to ${shown(issue.params.allowedValue)}` })
      else out.push(issue)
      continue
    }
    // ajv reports a failed anyOf right after its branches' issues, whose schema paths it prefixes
    // and whose values sit at or under its own (the latter tells array items apart).
    const prefix = `${issue.schemaPath}/`
    const within = (i: AjvIssue) => i.schemaPath.startsWith(prefix) && (i.instancePath === issue.instancePath || i.instancePath.startsWith(`${issue.instancePath}/`))
    let start = out.length
    while (start > 0 && within(out[start - 1]!)) start--
    out.push(...foldUnion(issue, out.splice(start), prefix))
  }
  return out
}

function foldUnion(anyOf: AjvIssue, group: AjvIssue[], prefix: string): AjvIssue[] {
  if (group.length === 0) return [anyOf] // branches behind a $ref report other schema paths
  const at = anyOf.instancePath
  const branches = new Map<string, AjvIssue[]>()
  for (const i of group) {
    const b = i.schemaPath.slice(prefix.length).split('/', 1)[0]!
    const list = branches.get(b)
    if (list) list.push(i)
    else branches.set(b, [i])
  }
  const isNull = (b: AjvIssue[]) => b.length === 1 && b[0]!.keyword === 'type' && b[0]!.params.type === 'null' && b[0]!.instancePath === at
  const others = [...branches.values()].filter((b) => !isNull(b))
  const nullable = others.length < branches.size
  const isConst = (i: AjvIssue) => i.keyword === 'const'
  const enumIssue = (path: string, extra: unknown[] = []): AjvIssue => {
    const values = [...group.filter((i) => isConst(i) && i.instancePath === path).map((i) => i.params.allowedValue), ...extra]
    return { instancePath: path, schemaPath: anyOf.schemaPath, keyword: 'enum', params: { allowedValues: values }, message: oneOfMessage(values) }
  }
  // A union of literals: every branch refused the value itself, by its type or its constant.
  const literal = (b: AjvIssue[]) => b.some(isConst) && b.every((i) => i.instancePath === at && (isConst(i) || i.keyword === 'type'))
  if (others.length > 0 && others.every(literal)) return [enumIssue(at, nullable ? [null] : [])]
  if (nullable && others.length === 1) return unique(others[0]!)
  // Every branch refused the value for one same reason (not an object, say): just that reason.
  const reasons = unique(others.flat())
  if (reasons.length === 1 && others.every((b) => b.length === 1)) return reasons
  // A union of objects with one literal field that tells them apart.
  const tags = new Set(
    others
      .flat()
      .filter((i) => isConst(i) && isChildOf(i.instancePath, at))
      .map((i) => i.instancePath),
  )
  if (tags.size === 1) {
    const tag = tags.values().next().value!
    const matched = others.filter((b) => !b.some((i) => isConst(i) && i.instancePath === tag))
    return matched.length === 0 ? [enumIssue(tag)] : unique(matched.flat())
  }
  return unique([...group, anyOf])
}

/** Drops repeats: a field every branch requires is reported by each of them. */
function unique(issues: AjvIssue[]): AjvIssue[] {
  const seen = new Set<string>()
  return issues.filter((i) => {
    const key = `${i.instancePath}\u0000${String(i.params.missingProperty ?? i.params.additionalProperty ?? '')}\u0000${i.message ?? ''}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/** Why `text` cannot be stored alike on both databases, if it cannot. */
function textFlaw(text: string): string | undefined {
  // PostgreSQL's text cannot hold NUL; half a surrogate pair is no UTF-8, and its JSON parser
  // refuses one (a stored row with one broke every later read of it).
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)'
  if (!text.isWellFormed()) return 'must not contain a lone surrogate (half of a UTF-16 pair)'
  return undefined
}

/**
 * The first string, value or key, in `value` that textFlaw refuses, with its path
 * (`body/metadata/note`). Iterative: the body parser bounds the depth, and no stack is spent here.
 */
function textFlawIn(value: unknown, part: string): { path: string; message: string } | undefined {
  const stack: [unknown, string][] = [[value, part]]
  while (stack.length > 0) {
    const [v, path] = stack.pop()!
    if (typeof v === 'string') {
      const flaw = textFlaw(v)
      if (flaw !== undefined) return { path, message: flaw }
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v)
      // Pushed last first, so the first flaw in document order is the one reported.
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, x] = entries[i]!
        const flaw = textFlaw(k)
        if (flaw !== undefined) return { path: `${path}/${k}`, message: `key ${flaw}` }
        stack.push([x, `${path}/${k}`])
      }
    }
  }
  return undefined
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Top-level body fields (or `'all'`: the whole body) whose NULs and lone surrogates become
     * U+FFFD instead of a 400: what a tool printed or was called with is recorded as it came (a
     * binary file's bytes in an output).
     */
    textMended?: readonly string[] | 'all'
  }
}

/**
 * Text in a JSON object body or a query string that a database cannot store alike (a NUL, a lone
 * surrogate) is a 400 naming the field on every route, before anything reads it. The fields a
 * route lists in `textMended` are mended instead.
 */
export const rejectUnstorableText: preValidationHookHandler = (request, _reply, done) => {
  const mend = request.routeOptions.config.textMended
  if (mend === 'all') request.body = mendText(request.body)
  else if (mend !== undefined && typeof request.body === 'object' && request.body !== null) {
    const fields = request.body as Record<string, unknown>
    for (const f of mend) if (f in fields) fields[f] = mendText(fields[f])
  }
  const body = request.body
  const flaw = textFlawIn(request.query, 'querystring') ?? textFlawIn(body, 'body')
  done(flaw === undefined ? undefined : invalidField(flaw.path, flaw.message))
}
