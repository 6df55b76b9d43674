/**
 * Load generation for the HTTP benchmarks: autocannon runs with per-request generators, fixture
 * setup through the public API (agent, sessions) and deterministic, varied agent-step text.
 */
import autocannon from 'autocannon'
import { ADMIN_TOKEN, type ChildServer } from './child-server.js'

export const GOAL = 'Build a REST API for user management with JWT authentication, rate limiting and tests'
export const PLAN = [
  'design the user schema and migrations',
  'implement signup and login endpoints with JWT',
  'add rate limiting middleware',
  'write integration tests for auth',
  'document the API with OpenAPI',
]

// Mostly on-task vocabulary with some off-task phrases, so verdicts, drift events and loops all occur.
const VERBS = ['design', 'implement', 'add', 'write', 'refactor', 'test', 'document', 'review', 'fix', 'validate']
const OBJECTS = [
  'user schema',
  'login endpoint',
  'signup handler',
  'JWT token refresh',
  'password hashing',
  'rate limiter',
  'auth middleware',
  'integration tests',
  'OpenAPI spec',
  'migration script',
  'session store',
  'error responses',
]
const DETAILS = [
  'with bcrypt',
  'for expired tokens',
  'using sqlite',
  'behind the gateway',
  'per api key',
  'with fixtures',
  'for edge cases',
  'in the users module',
  'and update the changelog',
  'after code review',
]
const OFF_TASK = ['browse cat pictures on reddit', 'reorganise the desktop icons', 'read football transfer news', 'tweak the terminal colour theme', 'plan the team lunch menu']

/** A small deterministic PRNG (mulberry32), so every run posts the same text sequence. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function stepTextSource(seed: number): () => string {
  const rand = prng(seed)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!
  return () => (rand() < 0.15 ? pick(OFF_TASK) : `${pick(VERBS)} the ${pick(OBJECTS)} ${pick(DETAILS)}`)
}

export interface Fixture {
  apiKey: string
  sessionIds: string[]
}

async function post(server: ChildServer, path: string, token: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(server.baseUrl + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const json = (await res.json()) as Record<string, unknown>
  if (res.status !== 201) throw new Error(`POST ${path} → ${res.status}: ${JSON.stringify(json)}`)
  return json
}

/** A new agent's API key, through the admin API. */
export async function createAgent(server: ChildServer): Promise<string> {
  return (await post(server, '/v1/agents', ADMIN_TOKEN, { name: 'bench' })).api_key as string
}

/** One agent and `count` sessions with the goal and plan, created concurrently. */
export async function createFixture(server: ChildServer, count: number, concurrency = 16): Promise<Fixture> {
  const apiKey = await createAgent(server)
  const sessionIds: string[] = new Array(count)
  let next = 0
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const s = await post(server, '/v1/sessions', apiKey, { goal: GOAL, plan: PLAN, metadata: { bench: i } })
      sessionIds[i] = s.id as string
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  return { apiKey, sessionIds }
}

export interface Scenario {
  name: string
  method: 'GET' | 'POST'
  /** Called once per request: the path and (for POST) the JSON body. */
  next(): { path: string; body?: unknown }
  headers?: Record<string, string>
}

export interface LoadResult {
  name: string
  requests: number
  rps: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  statusCounts: Record<string, number>
  /** The first non-2xx response body seen, for the failure message. */
  sample: string | undefined
  seconds: number
}

export interface LoadOptions {
  connections: number
  /** Seconds of load; ignored when `amount` is set. */
  duration?: number
  /** A fixed number of requests instead of a duration. */
  amount?: number
}

/** Runs one autocannon load against `baseUrl` with a fresh request from `scenario.next()` each time. */
export async function runLoad(baseUrl: string, scenario: Scenario, opts: LoadOptions): Promise<LoadResult> {
  let sample: string | undefined
  const headers = { 'content-type': 'application/json', ...scenario.headers }
  const result = await autocannon({
    url: baseUrl,
    connections: opts.connections,
    ...(opts.amount === undefined ? { duration: opts.duration ?? 10 } : { amount: opts.amount }),
    timeout: 30,
    requests: [
      {
        method: scenario.method,
        setupRequest: (req) => {
          const { path, body } = scenario.next()
          return { ...req, path, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }
        },
        onResponse: (status, body) => {
          if ((status < 200 || status > 299) && sample === undefined) sample = `${status} ${String(body).slice(0, 500)}`
        },
      },
    ],
  })
  const statusCounts: Record<string, number> = {}
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCounts[code] = stat.count ?? 0
  return {
    name: scenario.name,
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    statusCounts,
    sample,
    seconds: result.duration,
  }
}

/** The value of a `--name value` / `--name=value` flag, if given. */
export function flagValue(name: string): string | undefined {
  const args = process.argv.slice(2)
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === `--${name}` && args[i + 1] !== undefined) return args[i + 1]
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3)
  }
  return undefined
}

/** A numeric flag (see `flagValue`). */
export function flag(name: string, fallback: number): number {
  const value = flagValue(name)
  return value === undefined ? fallback : Number(value)
}

/** True when `--name` is on the command line. */
export function hasFlag(name: string): boolean {
  return process.argv.slice(2).includes(`--${name}`)
}

export const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
