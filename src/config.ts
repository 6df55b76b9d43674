import { envSchema } from 'env-schema'
import { Type, type Static } from 'typebox'
import { DEFAULT_BREAKER } from './providers/circuit-breaker.js'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

// Upper bounds, documented in docs/reference.md. Timers overflow above 2^31-1 ms (~24.8 days): node then
// fires at once (TimeoutOverflowWarning) or throws (AbortSignal.timeout, undici), so a large value
// must be refused here, not discovered on the first call. The caps sit well below that, at values
// past which a setting stops making sense.
/** One provider or webhook call: 10 minutes. */
const MAX_TIMEOUT_MS = 600_000
/** The embeddings circuit breaker's cool-down: 1 day. */
const MAX_COOLDOWN_MS = 86_400_000
/** One delay of the webhook retry schedule, in seconds: 7 days. */
const MAX_RETRY_DELAY_S = 604_800
/** A failing webhook endpoint is disabled after at most a year. */
const MAX_DISABLE_AFTER_HOURS = 8_760
const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000
const MAX_BREAKER_FAILURES = 10_000

/**
 * The environment the server reads (docs/reference.md lists each variable). This is the only module that reads
 * `process.env`, and only through `loadConfig(process.env)` in server.ts; tests pass their own object.
 */
export const EnvSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
  GOALKEEPER_DB: Type.String({ default: './data/goalkeeper.db', minLength: 1 }),
  GOALKEEPER_DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  GOALKEEPER_ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  GOALKEEPER_IDEMPOTENCY_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  LOG_LEVEL: Type.Unsafe<LogLevel>({ type: 'string', enum: [...LOG_LEVELS], default: 'info' }),
  GOALKEEPER_WEBHOOK_RETRY_SCHEDULE: Type.String({
    default: '5,300,1800,7200,18000,36000,36000',
    pattern: '^\\s*\\d+\\s*(,\\s*\\d+\\s*)*$',
  }),
  GOALKEEPER_WEBHOOK_TIMEOUT_MS: Type.Integer({ default: 15000, minimum: 1, maximum: MAX_TIMEOUT_MS }),
  GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: Type.Boolean({ default: false }),
  GOALKEEPER_RATE_LIMIT_PER_MINUTE: Type.Integer({ default: 6000, minimum: 0, maximum: MAX_RATE_LIMIT_PER_MINUTE }),
  GOALKEEPER_LEASE_MS: Type.Integer({ default: 30_000, minimum: 1000, maximum: MAX_TIMEOUT_MS }),
  GOALKEEPER_OTLP_MAX_BACKLOG: Type.Integer({ default: 20_000, minimum: 1, maximum: 10_000_000 }),
  GOALKEEPER_STATEMENT_TIMEOUT_MS: Type.Integer({ default: 5000, minimum: 100, maximum: MAX_TIMEOUT_MS }),
  GOALKEEPER_REQUEST_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 100, maximum: MAX_TIMEOUT_MS }),
  GOALKEEPER_WEBHOOK_DISABLE_AFTER_HOURS: Type.Number({ default: 120, exclusiveMinimum: 0, maximum: MAX_DISABLE_AFTER_HOURS }),
  GOALKEEPER_LLM_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  GOALKEEPER_LLM_API_KEY: Type.Optional(Type.String()),
  GOALKEEPER_LLM_MODEL: Type.Optional(Type.String({ minLength: 1 })),
  GOALKEEPER_LLM_TIMEOUT_MS: Type.Integer({ default: 10000, minimum: 1, maximum: MAX_TIMEOUT_MS }),
  GOALKEEPER_EMBEDDINGS_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  GOALKEEPER_EMBEDDINGS_API_KEY: Type.Optional(Type.String()),
  GOALKEEPER_EMBEDDINGS_MODEL: Type.Optional(Type.String({ minLength: 1 })),
  // Short: it bounds the wait a step or drift check adds before falling back to `enhanced`.
  GOALKEEPER_EMBEDDINGS_TIMEOUT_MS: Type.Integer({ default: 2000, minimum: 1, maximum: MAX_TIMEOUT_MS }),
  GOALKEEPER_EMBEDDINGS_BREAKER_FAILURES: Type.Integer({ default: DEFAULT_BREAKER.failures, minimum: 1, maximum: MAX_BREAKER_FAILURES }),
  GOALKEEPER_EMBEDDINGS_BREAKER_COOLDOWN_MS: Type.Integer({ default: DEFAULT_BREAKER.cooldownMs, minimum: 1, maximum: MAX_COOLDOWN_MS }),
})

type Env = Static<typeof EnvSchema>

export interface LlmConfig {
  url: string
  apiKey: string | undefined
  model: string
  timeoutMs: number
}

export interface EmbeddingsConfig {
  url: string
  apiKey: string | undefined
  model: string
  timeoutMs: number
  /** After `failures` consecutive failed checks, no calls for `cooldownMs` (then one trial call). */
  breaker: { failures: number; cooldownMs: number }
}

export interface Config {
  host: string
  port: number
  dbPath: string
  /** PostgreSQL instead of the SQLite file when set (several replicas on one database). */
  databaseUrl: string | undefined
  adminToken: string | undefined
  /** Keys the Idempotency-Key digests and seals (HMAC); unset: plain SHA-256 (src/idempotency/service.ts). */
  idempotencySecret: string | undefined
  logLevel: LogLevel
  webhook: {
    retrySchedule: number[]
    timeoutMs: number
    allowPrivateUrls: boolean
    disableAfterHours: number
  }
  rateLimitPerMinute: number
  /**
   * How long a replica's claim on due work (a reminder occurrence, a delivery beyond its attempt's
   * timeout) keeps it from the others: the delay before a crashed replica's work is taken over.
   */
  leaseMs: number
  /** OTLP records waiting to be applied past which exports are turned away (src/otlp/service.ts). */
  otlpMaxBacklog: number
  /**
   * PostgreSQL: the longest one statement may run (a lock wait included), and the longest wait to
   * connect or for a pooled connection; past it the request answers 503 (src/db/postgres.ts).
   */
  statementTimeoutMs: number
  /** The longest a request may take before it is answered 503 (plugins/request-timeout.ts). */
  requestTimeoutMs: number
  /** Present only when GOALKEEPER_LLM_URL is set: step verification stays heuristic otherwise. */
  llm: LlmConfig | undefined
  /** Present only when GOALKEEPER_EMBEDDINGS_URL is set: sessions may then choose `similarity: embeddings`. */
  embeddings: EmbeddingsConfig | undefined
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** The part of an ajv error the messages below use (env-schema attaches ajv's list as `errors`). */
interface SchemaError {
  instancePath: string
  keyword: string
  message?: string
  params: Record<string, unknown>
}

const RETRY_SCHEDULE_HINT = `must be whole seconds separated by commas, each at most ${MAX_RETRY_DELAY_S} (7 days), e.g. 5,300,1800`

// A pattern's regex means nothing to someone setting a variable: say what is expected instead.
const PATTERN_HINTS: Record<string, string> = {
  GOALKEEPER_WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE_HINT,
  GOALKEEPER_LLM_URL: 'must be an http(s) URL',
  GOALKEEPER_EMBEDDINGS_URL: 'must be an http(s) URL',
}

/** One ajv error as "<VAR> must …", listing allowed values where ajv only says there are some. */
function describeSchemaError(e: SchemaError): string {
  const name = e.instancePath.replace(/^\//, '')
  if (e.keyword === 'enum') return `${name} must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`
  if (e.keyword === 'type' && e.params.type === 'boolean') return `${name} must be true or false`
  if (e.keyword === 'type' && e.params.type === 'integer') return `${name} must be a whole number`
  if (e.keyword === 'pattern' && PATTERN_HINTS[name]) return `${name} ${PATTERN_HINTS[name]}`
  return `${name} ${e.message ?? 'is invalid'}`
}

/**
 * Validates and types an environment object. Empty strings count as unset (a blank `FOO=` in a
 * compose file means "no value"). Throws a ConfigError naming the bad variable.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const data: Record<string, string> = {}
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value.trim() !== '') data[key] = value.trim()
  }
  let e: Env
  try {
    e = envSchema<Env>({ schema: structuredClone(EnvSchema), data, env: false, dotenv: false })
  } catch (err) {
    const errors = (err as { errors?: SchemaError[] }).errors
    // ajv says e.g. "env/PORT must be <= 65535": rephrase so the variable name leads.
    const msg = errors?.length ? errors.map(describeSchemaError).join(', ') : (err as Error).message.replace(/env\/(\w+)/g, '$1')
    throw new ConfigError(`Invalid configuration: ${msg}`)
  }
  // ajv coerces "1e400" or "Infinity" to Infinity and then skips `maximum` (it checks bounds only
  // for finite numbers), so an infinite timeout would pass: refuse it here.
  for (const [key, value] of Object.entries(e)) {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new ConfigError(`Invalid configuration: ${key} must be a finite number`)
  }
  // The pattern admits e.g. `http://` alone or a space in the host: the URL parser decides.
  for (const key of ['GOALKEEPER_LLM_URL', 'GOALKEEPER_EMBEDDINGS_URL'] as const) {
    const url = e[key]
    if (url !== undefined && !URL.canParse(url)) throw new ConfigError(`Invalid configuration: ${key} must be an http(s) URL`)
  }
  const retrySchedule = e.GOALKEEPER_WEBHOOK_RETRY_SCHEDULE.split(',').map((s) => Number(s.trim()))
  if (retrySchedule.some((s) => s > MAX_RETRY_DELAY_S)) throw new ConfigError(`Invalid configuration: GOALKEEPER_WEBHOOK_RETRY_SCHEDULE ${RETRY_SCHEDULE_HINT}`)
  return {
    host: e.HOST,
    port: e.PORT,
    dbPath: e.GOALKEEPER_DB,
    databaseUrl: e.GOALKEEPER_DATABASE_URL,
    adminToken: e.GOALKEEPER_ADMIN_TOKEN,
    idempotencySecret: e.GOALKEEPER_IDEMPOTENCY_SECRET,
    logLevel: e.LOG_LEVEL,
    webhook: {
      retrySchedule,
      timeoutMs: e.GOALKEEPER_WEBHOOK_TIMEOUT_MS,
      allowPrivateUrls: e.GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS,
      disableAfterHours: e.GOALKEEPER_WEBHOOK_DISABLE_AFTER_HOURS,
    },
    rateLimitPerMinute: e.GOALKEEPER_RATE_LIMIT_PER_MINUTE,
    leaseMs: e.GOALKEEPER_LEASE_MS,
    otlpMaxBacklog: e.GOALKEEPER_OTLP_MAX_BACKLOG,
    statementTimeoutMs: e.GOALKEEPER_STATEMENT_TIMEOUT_MS,
    requestTimeoutMs: e.GOALKEEPER_REQUEST_TIMEOUT_MS,
    llm: e.GOALKEEPER_LLM_URL
      ? {
          url: e.GOALKEEPER_LLM_URL,
          apiKey: e.GOALKEEPER_LLM_API_KEY,
          model: e.GOALKEEPER_LLM_MODEL ?? 'gpt-4o-mini',
          timeoutMs: e.GOALKEEPER_LLM_TIMEOUT_MS,
        }
      : undefined,
    embeddings: e.GOALKEEPER_EMBEDDINGS_URL
      ? {
          url: e.GOALKEEPER_EMBEDDINGS_URL,
          apiKey: e.GOALKEEPER_EMBEDDINGS_API_KEY,
          model: e.GOALKEEPER_EMBEDDINGS_MODEL ?? 'text-embedding-3-small',
          timeoutMs: e.GOALKEEPER_EMBEDDINGS_TIMEOUT_MS,
          breaker: { failures: e.GOALKEEPER_EMBEDDINGS_BREAKER_FAILURES, cooldownMs: e.GOALKEEPER_EMBEDDINGS_BREAKER_COOLDOWN_MS },
        }
      : undefined,
  }
}
