import { Type, type Static, type TObject, type TProperties, type TSchema } from 'typebox'
import type { IdPrefix } from './ids.js'

/**
 * Shared API schemas. Conventions for every route file:
 * - request bodies use `Body({...})`: unknown fields are rejected with a 400 (a typo such as
 *   `drift_treshold` must not be silently ignored); query strings stay lenient;
 * - responses spread `...problemResponses` so 4xx/5xx are documented as problem+json;
 * - lists return `ListOf(Item)` built from a service's `Page` (see src/pagination.ts) and
 *   take `PaginationQuery(prefix)` or `NumberedPageQuery`, whose cursors are checked here.
 */

/** RFC 9457 problem details, the body of every error response. */
export const Problem = Type.Object(
  {
    type: Type.String({ description: 'A URN naming the kind of problem, e.g. urn:problem:not_found.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String({ description: 'The request path.' }),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
        description: 'Field-level messages of a validation failure (400 or 422); path is the request part and the field, e.g. body/trigger/cron.',
      }),
    ),
  },
  { $id: 'Problem', title: 'Problem' },
)
export type ProblemBody = Static<typeof Problem>

/** `$ref` to the registered Problem schema that still type-checks as a Problem. */
export const ProblemRef = Type.Unsafe<ProblemBody>(Type.Ref('Problem'))

const problemContent = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemRef } },
})

/** Spread into every route's `response` map. */
export const problemResponses = {
  '4xx': problemContent('Client error (problem+json).'),
  '5xx': problemContent('Server error (problem+json).'),
}

/**
 * A request-body object that rejects unknown fields. `examples` (type-checked against the body)
 * become the request example that Swagger UI's "Try it out" sends; without one it builds a sample
 * from the schema's extremes (drift_threshold 1, max_tokens 1), which runs but means nothing.
 */
export function Body<T extends TProperties>(properties: T, options: { description?: string; examples?: Static<TObject<T>>[] } = {}): TObject<T> {
  return Type.Object(properties, { ...options, additionalProperties: false })
}

/**
 * A query parameter with a default: optional in the schema, so the OpenAPI document does not mark
 * it `required` (a client may leave it out), yet typed as always present, because ajv's
 * `useDefaults` fills it in before any handler runs.
 */
export function Defaulted<T extends TSchema>(schema: T): T {
  return Type.Optional(schema) as unknown as T
}

/** Bounds of a free-form JSON value a client stores: its JSON text's UTF-8 bytes, its keys at every level, its depth. */
export interface JsonLimits {
  bytes: number
  keys: number
  depth: number
}

/** The keyword carrying a schema's JsonLimits; validation.ts teaches it to ajv. */
export const JSON_LIMITS_KEYWORD = 'x-json-limits'

/**
 * A free-form JSON object a client stores and reads back, within `limits` (a 400 naming the field
 * past any of them): unbounded, 25 concurrent sessions with 60,000 metadata keys (880 KB each)
 * aborted the process on its 192 MB heap; such an object parses into ~3 MB of heap.
 */
export const JsonObjectInput = (limits: JsonLimits, description: string) =>
  Type.Record(Type.String(), Type.Unknown(), {
    description: `${description} At most ${limits.bytes / 1024} KB of JSON, ${limits.keys} keys counting nested ones, ${limits.depth} levels deep.`,
    [JSON_LIMITS_KEYWORD]: limits,
  })

/** An id with its type prefix, e.g. `Id('agt')`. */
export const Id = (prefix: string) => Type.String({ pattern: `^${prefix}_[A-Za-z0-9_-]+$`, maxLength: 64, examples: [`${prefix}_0mhx3k2c8Yy6a4pQ1rT9sWb2`] })

export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T09:00:00.000Z'] })

/** `?limit=`: 1–200, default 50. */
const PageLimit = Defaulted(Type.Integer({ minimum: 1, maximum: 200, default: 50 }))

/**
 * Cursors are checked by shape, so a malformed one is a 400 (path `querystring/cursor`): compared
 * as given, garbage sorted before or after every id and silently restarted or emptied the list.
 * The length bound sits in the pattern so a bad cursor gets one error, not two.
 */
const IdCursor = (prefix: IdPrefix) => Type.String({ pattern: `^${prefix}_[A-Za-z0-9_-]{1,${63 - prefix.length}}$`, description: `The previous page's next_cursor (${prefix}_…).` })
/**
 * A pattern for the decimal integers 0..max, no leading zeros: a number cursor stays a string (as
 * next_cursor is) yet has a range, so a cursor past its column's type is a 400, not a database
 * error (2147483648 against PostgreSQL's integer step_number was a 500).
 */
export function decimalUpTo(max: number): string {
  const top = String(max)
  const n = top.length
  // Shorter numbers, then those of max's length: its first i digits, a smaller digit, any digits.
  const alternatives = n > 1 ? ['0', `[1-9][0-9]{0,${n - 2}}`] : []
  for (let i = 0; i < n; i++) {
    const low = i === 0 && n > 1 ? 1 : 0
    const digit = Number(top[i])
    if (digit > low) alternatives.push(`${top.slice(0, i)}[${low}-${digit - 1}]${i < n - 1 ? `[0-9]{${n - i - 1}}` : ''}`)
  }
  return `^(?:${[...alternatives, top].join('|')})$`
}

/** The largest number cursor of a list keyed by a PostgreSQL `integer` (a step number). */
export const INT4_MAX = 2_147_483_647

/** The cursor of a list keyed by a number (step number, event sequence), at most `max`. */
const NumberCursor = (max: number) => Type.String({ pattern: decimalUpTo(max), description: `The previous page's next_cursor (a number, 0–${max}).` })

/** `?limit=&cursor=` of a list of `prefix` ids; the cursor is the last id of the previous page. */
export const PaginationQuery = (prefix: IdPrefix) => Type.Object({ limit: PageLimit, cursor: Type.Optional(IdCursor(prefix)) })
/** `?limit=&cursor=` of a list keyed by a number of at most `max`. */
export const NumberedPageQuery = (max: number) => Type.Object({ limit: PageLimit, cursor: Type.Optional(NumberCursor(max)) })

/** The list envelope `{ items, next_cursor }`. */
export function ListOf<T extends TSchema>(item: T, options: { $id?: string; title?: string } = {}) {
  return Type.Object({ items: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) }, options)
}
