import { relative } from 'node:path'
import fc from 'fast-check'
import { expect, onTestFailed } from 'vitest'
import type { TestApp } from '../helpers.js'

/**
 * Shared pieces of the HTTP fuzz tests (sessions-fuzz, reminders-fuzz, webhooks-fuzz,
 * agents-fuzz): query strings, junk bodies, path ids, wrongly typed leaves, and the check every
 * response must pass (never a 5xx; problem+json on errors; nothing stored on a rejection).
 */

/**
 * `n` times FUZZ_SCALE (default 1). For a long hunt:
 * `FUZZ_SCALE=20 npx vitest run test/http/*-fuzz.test.ts --testTimeout=0`.
 */
export const fuzzRuns = (n: number): number => Math.max(1, Math.round(n * Number(process.env.FUZZ_SCALE ?? 1)))

/**
 * fast-check's parameters for a fuzz property, called inside the test: `n` runs (times
 * FUZZ_SCALE) from a random seed, or FUZZ_SEED's to replay one, after `examples`, the
 * counterexamples earlier runs found, which every run tries first. fast-check names the seed of a
 * property that fails; a test that fails otherwise (a timeout) names it here, with how to replay it.
 */
export function fuzzParameters<Ts>(n: number, examples: NoInfer<Ts>[] = []): fc.Parameters<Ts> {
  const seed = process.env.FUZZ_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED)
  const { currentTestName, testPath } = expect.getState()
  const project = process.env.GOALKEEPER_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite'
  const file = relative(process.cwd(), testPath ?? '')
  onTestFailed(() => {
    console.error(`Fuzz seed ${seed}; replay: FUZZ_SEED=${seed} npx vitest run --project ${project} ${file} -t ${JSON.stringify(currentTestName?.split(' > ').at(-1) ?? '')}`)
  })
  return { numRuns: fuzzRuns(n), seed, examples }
}

/** Number spellings that coercion turns into odd values, plus out-of-range integers. */
const NUMBER_SPELLINGS = [
  '1e400',
  '-1e400',
  'Infinity',
  '-Infinity',
  'NaN',
  '1e-400',
  '0x10',
  '0b11',
  '9007199254740993',
  ' 5',
  '',
  'true',
  '-1',
  '0',
  '-0',
  '1.5',
  '99999999999999999999999',
  '-99999999999999999999999',
  '2147483648',
  '-9223372036854775809',
]

/** Query values: short strings, the number spellings above, doubles, integers and long strings. */
const queryValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  { arbitrary: fc.constantFrom(...NUMBER_SPELLINGS), weight: 4 },
  fc.double().map(String),
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
  fc.string({ unit: 'binary', maxLength: 16 }),
  fc.string({ minLength: 200, maxLength: 2000 }),
)

/** `valid` nine times in ten, else `other`. */
export const mostly = <T, U>(valid: fc.Arbitrary<T>, other: fc.Arbitrary<U>): fc.Arbitrary<T | U> => fc.oneof({ arbitrary: valid, weight: 9 }, { arbitrary: other, weight: 1 })

/** `key=value` pairs over known keys; keys may repeat (`?limit=1&limit=2` becomes an array). */
export function queryOf(keys: readonly string[] | Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const typical: Record<string, fc.Arbitrary<string>> = Array.isArray(keys) ? {} : (keys as Record<string, fc.Arbitrary<string>>)
  const names = Array.isArray(keys) ? (keys as readonly string[]) : Object.keys(keys)
  const pair = fc.constantFrom(...names).chain((k) => fc.tuple(fc.constant(k), typical[k] ? fc.oneof(typical[k], queryValue) : queryValue))
  return fc.array(pair, { maxLength: 4 }).map((pairs) => new URLSearchParams(pairs).toString())
}

/** A JSON body that looks like ours (known field names with any JSON values), or any JSON at all. */
export function junkBody(fields: readonly string[]): fc.Arbitrary<unknown> {
  return fc.oneof(fc.dictionary(fc.constantFrom(...fields), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), fc.jsonValue({ maxDepth: 3 }))
}

/** A near-valid body with, one time in eight, an unknown field added. */
export function withJunkField(body: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const extra = fc.tuple(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 })).map(([k, v]) => ({ [k]: v }))
  return fc.tuple(body, fc.oneof({ arbitrary: fc.constant({}), weight: 7 }, extra)).map(([b, e]) => ({ ...b, ...e }))
}

/** The raw request body: mostly JSON text, sometimes text that is not JSON at all. */
export function rawBody(body: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc.oneof({ arbitrary: body.map((b) => JSON.stringify(b) ?? 'null'), weight: 12 }, fc.string({ maxLength: 20 }))
}

/** Text as clients send it: ASCII, any code point (controls, lone surrogates), or just over a limit. */
export function text(max: number): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.string({ minLength: 1, maxLength: 24 }), weight: 8 },
    { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }), weight: 2 },
    fc.constantFrom('', ' ', '\u0000', '\u202e', 'x'.repeat(max), 'x'.repeat(max + 1), ` ${'y'.repeat(max)} `),
  )
}

/** ISO-ish instants: real ones, impossible ones, extreme years, offsets, and junk. */
export const isoLike = fc.oneof(
  fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    '2026-02-30T09:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-22T25:00:00Z',
    '2026-11-22T09:60:00Z',
    '2026-11-22T09:00:00+25:00',
    '+275760-09-13T00:00:00.000Z',
    '-271821-04-20T00:00:00.000Z',
    '9999-12-31T23:59:59.999Z',
    '0000-01-01T00:00:00Z',
    '1969-12-31T23:59:59.999Z',
    '2026-11-22T09:00:00',
    '2026-11-22',
    'now',
    '1e400',
    '2026-11-22T09:00:00.1234567890Z',
    '2026-03-08T02:30:00-05:00',
    '2026-11-22t09:00:00z',
    '1970-01-01T00:00:00+14:00',
  ),
  fc.string({ maxLength: 64 }),
)

/**
 * A path id: a number picks one of `known` at run time (the caller's own ids, another agent's),
 * a string is sent as is (malformed, unknown, badly encoded, over-long). See `fillId`.
 */
function pathId(prefix: string): fc.Arbitrary<number | string> {
  return fc.oneof(
    { arbitrary: fc.nat(), weight: 10 },
    fc.string({ maxLength: 20 }).map(encodeURIComponent),
    fc.string({ unit: 'binary', maxLength: 12 }).map((s) => `${prefix}_${encodeURIComponent(s)}`),
    fc.constantFrom(
      `${prefix}_0000000000000000000000`,
      `${prefix}_`,
      `${prefix.toUpperCase()}_x`,
      `${prefix}_${'a'.repeat(61)}`,
      `${prefix}_${'a'.repeat(200)}`,
      'x'.repeat(5000),
      '%zz',
      '%',
      '%E0%A4%A',
      '%00',
      '..',
      '%2e%2e',
      `${prefix}_x%2Fy`,
      ' ',
      `${prefix}_x?`,
    ),
  )
}

/** The path id `pathId` drew: a number picks from `known`. */
const fillId = (id: number | string, known: readonly string[]): string => (typeof id === 'number' ? known[id % known.length]! : id)

type Scalar = string | number | boolean
export type Leaf = { path: (string | number)[]; value: Scalar }

/** Every scalar leaf of a body; `skip(path, key)` leaves out free-form parts. */
export function leaves(v: unknown, skip: (path: (string | number)[], key: string) => boolean = () => false, path: (string | number)[] = []): Leaf[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => leaves(x, skip, [...path, i]))
  if (v !== null && typeof v === 'object') {
    return Object.entries(v).flatMap(([k, x]) => (skip(path, k) ? [] : leaves(x, skip, [...path, k])))
  }
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? [{ path, value: v }] : []
}

/** A copy of `payload` with the leaf at `path` replaced. */
export function withLeaf(payload: Record<string, unknown>, path: (string | number)[], value: unknown): Record<string, unknown> {
  const copy = structuredClone(payload)
  let at = copy as Record<string | number, any> // eslint-disable-line @typescript-eslint/no-explicit-any -- walks any JSON shape
  for (const key of path.slice(0, -1)) at = at[key]
  at[path.at(-1)!] = value
  return copy
}

/** A scalar of another JSON type: what a lax client (or coercion) would have let through. */
export function wrongType(value: Scalar): fc.Arbitrary<unknown> {
  if (typeof value === 'string') return fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean())
  if (typeof value === 'number') return fc.oneof(fc.constant(String(value)), fc.boolean(), fc.string({ maxLength: 8 }))
  return fc.oneof(fc.constant(String(value)), fc.constantFrom(0, 1), fc.string({ maxLength: 8 }))
}

/** Every row of every table (FTS shadow tables, idempotency keys and the webhook outbox included). */
export async function dumpDb(t: TestApp): Promise<Record<string, unknown[]>> {
  const tables =
    t.db.dialect === 'sqlite'
      ? "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name"
      : "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
  const names = (await t.db.all<{ name: string }>(tables)).map((r) => r.name)
  // A stable row order: PostgreSQL's heap order moves with updates.
  const rows = async (n: string) => (await t.db.all<Record<string, unknown>>(`SELECT * FROM "${n}"`)).map((r) => JSON.stringify(r)).sort()
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, await rows(n)] as const)))
}

interface FuzzRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  url: string
  headers: Record<string, string>
  /** Raw body text, sent as `contentType` (default application/json). */
  body?: string
  contentType?: string
}

/**
 * Sends `req` and checks the contract for bad input: never a 5xx, every error problem+json, and
 * a rejected request leaves every table as it was. Returns the status.
 */
async function expectSafe(t: TestApp, req: FuzzRequest): Promise<number> {
  const before = await dumpDb(t)
  const res = await t.app.inject({
    method: req.method,
    url: req.url,
    headers: req.body === undefined ? req.headers : { ...req.headers, 'content-type': req.contentType ?? 'application/json' },
    ...(req.body === undefined ? {} : { payload: req.body }),
  })
  const what = `${req.method} ${req.url.slice(0, 300)} ${req.body?.slice(0, 500) ?? ''} → ${res.statusCode} ${res.body.slice(0, 500)}`
  expect(res.statusCode, what).toBeLessThan(500)
  if (res.statusCode >= 400) {
    expect(res.headers['content-type'], what).toContain('application/problem+json')
    expect(res.json(), what).toMatchObject({ status: res.statusCode, type: expect.any(String), detail: expect.any(String) })
    expect(await dumpDb(t), what).toEqual(before)
  }
  return res.statusCode
}

export interface FuzzRoute {
  method: FuzzRequest['method']
  /** With placeholders such as `{id}`, filled from `ids`. */
  path: string
  /** Query keys, or keys with typical values (mixed with `queryValue`). */
  query?: readonly string[] | Record<string, fc.Arbitrary<string>>
  body?: fc.Arbitrary<string>
}

/** `Bearer <token>` mostly; otherwise no or malformed credentials, a mangled token, or `wrong` (the admin token, an agent key). */
export function authorization(token: string, wrong: string): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constant(`Bearer ${token}`), weight: 12 },
    fc.constantFrom('', 'Bearer', 'Bearer gk_nope', `Bearer ${wrong}`, `bearer   ${token}  `, 'Basic YTpi', `Bearer ${token}x`, `Bearer ${token} ${token}`),
  )
}

const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 12 },
  fc.constantFrom('text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'APPLICATION/JSON', 'application/merge-patch+json'),
)
const idempotencyKey = fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, fc.constantFrom('k1', 'k2', ' ', 'x'.repeat(256)), fc.string({ maxLength: 10 }))

export interface FuzzOptions {
  routes: readonly FuzzRoute[]
  /** Per placeholder name (`id`, `message_id`, ...): `pathId` for its prefix, and the ids it picks from. */
  ids: Record<string, { prefix: string; known: () => readonly string[] }>
  authorization: fc.Arbitrary<string>
  /** Other agents' ids: a request naming one is never a success nor a 409 (that would leak it). */
  foreign?: () => readonly string[]
  /** Runs after every request (e.g. to replace fixtures a request deleted). */
  after?: () => void | Promise<void>
  numRuns: number
  /** Requests earlier runs found failing, sent first on every run. */
  examples?: FuzzExample[]
}

/** A request a fuzz run found failing, kept as a fixed case: path ids are the first known ones, no Idempotency-Key. */
interface FuzzExample {
  method: FuzzRequest['method']
  path: string
  query?: string
  body?: string
  authorization: string
}

/** Random requests to random `routes`, each checked with `expectSafe`; returns how many were rejected. */
export async function fuzzRoutes(t: TestApp, opts: FuzzOptions): Promise<number> {
  const names = Object.keys(opts.ids)
  const req = fc.constantFrom(...opts.routes).chain((route) =>
    fc.record({
      route: fc.constant(route),
      ids: fc.record(Object.fromEntries(names.map((n) => [n, pathId(opts.ids[n]!.prefix)]))),
      query: route.query ? queryOf(route.query) : fc.constant(''),
      body: route.body ?? fc.oneof({ arbitrary: fc.constant(null), weight: 6 }, fc.constantFrom('{}', '{"x":1}', 'not json', '')),
      authorization: opts.authorization,
      key: idempotencyKey,
      contentType,
    }),
  )
  type Drawn = typeof req extends fc.Arbitrary<infer R> ? R : never
  const examples = (opts.examples ?? []).map((e): [Drawn] => [
    {
      route: { method: e.method, path: e.path },
      ids: Object.fromEntries(names.map((n) => [n, 0])),
      query: e.query ?? '',
      body: e.body ?? null,
      authorization: e.authorization,
      key: null,
      contentType: 'application/json',
    },
  ])
  let rejected = 0
  const stats = new Map<string, number>()
  await fc.assert(
    fc.asyncProperty(req, async ({ route, ids, query, body, authorization, key, contentType }) => {
      const used: string[] = []
      let path = route.path
      for (const name of names) {
        if (!path.includes(`{${name}}`)) continue
        const id = fillId(ids[name]!, opts.ids[name]!.known())
        used.push(id)
        path = path.replace(`{${name}}`, id)
      }
      const url = path + (query ? `?${query}` : '')
      const headers: Record<string, string> = { ...(authorization ? { authorization } : {}), ...(key === null ? {} : { 'idempotency-key': key }) }
      const status = await expectSafe(t, { method: route.method, url, headers, ...(body === null ? {} : { body, contentType }) })
      if (status >= 400) rejected++
      const seen = `${route.method} ${route.path} → ${status}`
      stats.set(seen, (stats.get(seen) ?? 0) + 1)
      const foreign = opts.foreign?.() ?? []
      if (used.some((id) => foreign.includes(id))) expect(status < 300 || status === 409, `${route.method} ${url} → ${status}`).toBe(false)
      await opts.after?.()
    }),
    fuzzParameters(opts.numRuns, examples),
  )
  // FUZZ_STATS=1 shows how deep the requests got: statuses per route.
  if (process.env.FUZZ_STATS)
    console.log(
      [...stats]
        .sort()
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n'),
    )
  return rejected
}

/** A valid body whose every scalar leaf has a declared type (free-form parts left out by `skip`). */
export interface TypedTemplate {
  method: 'POST' | 'PUT' | 'PATCH'
  url: string
  payload: Record<string, unknown>
}

/** Sends each template as is: all must succeed, or the wrong-type property proves nothing. */
export async function expectTemplatesAccepted(t: TestApp, templates: readonly TypedTemplate[], headers: Record<string, string>, after?: () => void | Promise<void>) {
  for (const { method, url, payload } of templates) {
    const res = await t.app.inject({ method, url, headers, payload })
    expect(res.statusCode, `${method} ${url} → ${res.body}`).toBeLessThan(300)
    await after?.()
  }
}

/**
 * One scalar leaf of a template replaced by a value of another JSON type: always a 400
 * (problem+json, an error naming that field), and nothing stored.
 */
export async function fuzzWrongTypes(
  t: TestApp,
  templates: readonly TypedTemplate[],
  headers: Record<string, string>,
  opts: { numRuns: number; skip?: (path: (string | number)[], key: string) => boolean },
) {
  const mutated = fc.constantFrom(...templates).chain((route) => fc.constantFrom(...leaves(route.payload, opts.skip)).chain((leaf) => wrongType(leaf.value).map((bad) => ({ route, leaf, bad }))))
  await fc.assert(
    fc.asyncProperty(mutated, async ({ route, leaf, bad }) => {
      const before = await dumpDb(t)
      const payload = withLeaf(route.payload, leaf.path, bad)
      const res = await t.app.inject({ method: route.method, url: route.url, headers, payload })
      const what = `${route.method} ${route.url} ${JSON.stringify(payload)} → ${res.body}`
      expect(res.statusCode, what).toBe(400)
      expect(res.headers['content-type'], what).toContain('application/problem+json')
      const key = String(leaf.path.findLast((k) => typeof k === 'string'))
      expect(
        res.json().errors?.some((e: { path: string }) => e.path.includes(key)),
        what,
      ).toBe(true)
      expect(await dumpDb(t), what).toEqual(before)
    }),
    fuzzParameters(opts.numRuns),
  )
}
