import { describe, expect, it } from 'vitest'
import { ConfigError, EnvSchema, loadConfig } from '../src/config.js'

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({})
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      dbPath: './data/goalkeeper.db',
      adminToken: undefined,
      logLevel: 'info',
      rateLimitPerMinute: 6000,
      llm: undefined,
      embeddings: undefined,
    })
    expect(c.webhook).toEqual({
      retrySchedule: [5, 300, 1800, 7200, 18000, 36000, 36000],
      timeoutMs: 15000,
      allowPrivateUrls: false,
      disableAfterHours: 120,
    })
  })

  it('coerces and types given values, ignores unrelated variables and treats blanks as unset', () => {
    const c = loadConfig({
      HOST: '0.0.0.0',
      PORT: '9000',
      GOALKEEPER_ADMIN_TOKEN: 'a-long-enough-admin-token',
      GOALKEEPER_WEBHOOK_RETRY_SCHEDULE: '1, 2,3',
      GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
      GOALKEEPER_RATE_LIMIT_PER_MINUTE: '0',
      GOALKEEPER_LLM_URL: 'http://127.0.0.1:11434/v1/chat/completions',
      GOALKEEPER_LLM_MODEL: 'llama3',
      LOG_LEVEL: '',
      PATH: '/usr/bin',
    })
    expect(c.port).toBe(9000)
    expect(c.adminToken).toBe('a-long-enough-admin-token')
    expect(c.webhook.retrySchedule).toEqual([1, 2, 3])
    expect(c.webhook.allowPrivateUrls).toBe(true)
    expect(c.rateLimitPerMinute).toBe(0)
    expect(c.logLevel).toBe('info')
    expect(c.llm).toEqual({ url: 'http://127.0.0.1:11434/v1/chat/completions', apiKey: undefined, model: 'llama3', timeoutMs: 10000 })
  })

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['GOALKEEPER_WEBHOOK_RETRY_SCHEDULE', '5,soon'],
    ['GOALKEEPER_WEBHOOK_TIMEOUT_MS', '0'],
    ['GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS', 'yes'],
    ['GOALKEEPER_RATE_LIMIT_PER_MINUTE', '-1'],
    ['GOALKEEPER_ADMIN_TOKEN', 'short'],
    ['GOALKEEPER_IDEMPOTENCY_SECRET', 'short'],
    ['LOG_LEVEL', 'loud'],
    ['GOALKEEPER_LLM_URL', 'ftp://example.com'],
    ['GOALKEEPER_EMBEDDINGS_URL', 'ftp://example.com/v1/embeddings'],
    ['GOALKEEPER_EMBEDDINGS_URL', 'http://'],
    ['GOALKEEPER_EMBEDDINGS_URL', 'http://bad host/v1/embeddings'],
    ['GOALKEEPER_EMBEDDINGS_TIMEOUT_MS', '0'],
    ['GOALKEEPER_EMBEDDINGS_BREAKER_FAILURES', '0'],
    ['GOALKEEPER_EMBEDDINGS_BREAKER_COOLDOWN_MS', '1.5'],
  ])('rejects %s=%s with a message naming the variable', (name, value) => {
    const run = () => loadConfig({ [name]: value })
    expect(run).toThrow(ConfigError)
    expect(run).toThrow(new RegExp(`^Invalid configuration: ${name} `))
  })

  // Each of these used to pass and then fail at run time: timers overflow above 2^31-1 ms.
  it.each([
    ['GOALKEEPER_WEBHOOK_TIMEOUT_MS', '99999999999'],
    ['GOALKEEPER_WEBHOOK_TIMEOUT_MS', '600001'],
    ['GOALKEEPER_WEBHOOK_TIMEOUT_MS', '1e400'],
    ['GOALKEEPER_LLM_TIMEOUT_MS', '99999999999'],
    ['GOALKEEPER_EMBEDDINGS_TIMEOUT_MS', '3000000000'],
    ['GOALKEEPER_EMBEDDINGS_BREAKER_COOLDOWN_MS', '3000000000'],
    ['GOALKEEPER_EMBEDDINGS_BREAKER_FAILURES', '99999999999'],
    ['GOALKEEPER_WEBHOOK_DISABLE_AFTER_HOURS', '1e400'],
    ['GOALKEEPER_WEBHOOK_DISABLE_AFTER_HOURS', 'Infinity'],
    ['GOALKEEPER_WEBHOOK_DISABLE_AFTER_HOURS', '8761'],
    ['GOALKEEPER_WEBHOOK_RETRY_SCHEDULE', '5,99999999999'],
    ['GOALKEEPER_RATE_LIMIT_PER_MINUTE', '99999999999'],
    ['PORT', '1e400'],
  ])('refuses the out-of-range %s=%s at start, naming it', (name, value) => {
    const run = () => loadConfig({ [name]: value })
    expect(run).toThrow(ConfigError)
    expect(run).toThrow(new RegExp(`^Invalid configuration: ${name} `))
  })

  it('accepts every numeric setting at its documented maximum', () => {
    const c = loadConfig({
      GOALKEEPER_WEBHOOK_TIMEOUT_MS: '600000',
      GOALKEEPER_WEBHOOK_RETRY_SCHEDULE: '604800',
      GOALKEEPER_WEBHOOK_DISABLE_AFTER_HOURS: '8760',
      GOALKEEPER_RATE_LIMIT_PER_MINUTE: '1000000',
      GOALKEEPER_LLM_URL: 'http://127.0.0.1:1/v1/chat/completions',
      GOALKEEPER_LLM_TIMEOUT_MS: '600000',
      GOALKEEPER_EMBEDDINGS_URL: 'http://127.0.0.1:1/v1/embeddings',
      GOALKEEPER_EMBEDDINGS_TIMEOUT_MS: '600000',
      GOALKEEPER_EMBEDDINGS_BREAKER_FAILURES: '10000',
      GOALKEEPER_EMBEDDINGS_BREAKER_COOLDOWN_MS: '86400000',
    })
    expect(c.webhook).toMatchObject({ timeoutMs: 600_000, retrySchedule: [604_800], disableAfterHours: 8760 })
    expect(c.llm?.timeoutMs).toBe(600_000)
    expect(c.embeddings).toMatchObject({ timeoutMs: 600_000, breaker: { failures: 10_000, cooldownMs: 86_400_000 } })
  })

  it('gives every numeric setting a maximum a timer can hold', () => {
    const numeric = Object.entries(EnvSchema.properties).filter(([, s]) => ['integer', 'number'].includes((s as { type?: string }).type ?? ''))
    expect(numeric.length).toBeGreaterThan(5)
    for (const [name, schema] of numeric) {
      const max = (schema as { maximum?: number }).maximum
      expect(max, name).toBeDefined()
      expect(max!, name).toBeLessThanOrEqual(2 ** 31 - 1)
    }
  })

  it.each([
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'],
    [{ GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: 'yes' }, 'GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS must be true or false'],
    [{ GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS: '1' }, 'GOALKEEPER_ALLOW_PRIVATE_WEBHOOK_URLS must be true or false'],
    [{ GOALKEEPER_WEBHOOK_RETRY_SCHEDULE: '5,soon' }, 'GOALKEEPER_WEBHOOK_RETRY_SCHEDULE must be whole seconds separated by commas, each at most 604800 (7 days), e.g. 5,300,1800'],
    [{ PORT: 'eighty' }, 'PORT must be a whole number'],
    [{ GOALKEEPER_LLM_URL: 'ftp://example.com' }, 'GOALKEEPER_LLM_URL must be an http(s) URL'],
    [{ PORT: '70000', LOG_LEVEL: 'loud' }, 'PORT must be <= 65535, LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'],
  ])('says what %o should be instead', (env, message) => {
    expect(() => loadConfig(env)).toThrow(new ConfigError(`Invalid configuration: ${message}`))
  })

  it('configures an embeddings provider only when its URL is set', () => {
    const c = loadConfig({ GOALKEEPER_EMBEDDINGS_URL: 'http://127.0.0.1:8081/v1/embeddings', GOALKEEPER_EMBEDDINGS_API_KEY: 'sk-1' })
    expect(c.embeddings).toEqual({ url: 'http://127.0.0.1:8081/v1/embeddings', apiKey: 'sk-1', model: 'text-embedding-3-small', timeoutMs: 2000, breaker: { failures: 5, cooldownMs: 30000 } })
    expect(loadConfig({ GOALKEEPER_EMBEDDINGS_MODEL: 'x', GOALKEEPER_EMBEDDINGS_URL: ' ' }).embeddings).toBeUndefined()
  })
})
