import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.js'

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({})
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      dbPath: './data/goalkeeper.db',
      walCheckpoint: 'commit',
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

  it('configures an embeddings provider only when its URL is set', () => {
    const c = loadConfig({ GOALKEEPER_EMBEDDINGS_URL: 'http://127.0.0.1:8081/v1/embeddings', GOALKEEPER_EMBEDDINGS_API_KEY: 'sk-1' })
    expect(c.embeddings).toEqual({ url: 'http://127.0.0.1:8081/v1/embeddings', apiKey: 'sk-1', model: 'text-embedding-3-small', timeoutMs: 2000, breaker: { failures: 5, cooldownMs: 30000 } })
    expect(loadConfig({ GOALKEEPER_EMBEDDINGS_MODEL: 'x', GOALKEEPER_EMBEDDINGS_URL: ' ' }).embeddings).toBeUndefined()
  })
})
