import { afterEach, describe, expect, it, vi } from 'vitest'
import { Goalkeeper, GoalkeeperError, type RetryOptions } from '@goalkeeper/client'
import { SessionRepository } from '../../src/sessions/repository.js'
import { WRITE_ATTEMPTS } from '../../src/sessions/store.js'
import { faultProxy, type Fault, type FaultProxy } from './fault-proxy.js'
import { GOAL, liveServer, PLAN } from './live-server.js'

const proxies: FaultProxy[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const p of proxies.splice(0)) await p.close()
})

/** A live server, a session on it, and a client that reaches it through a fault proxy. */
async function behindProxy(faults: Fault[], retry: RetryOptions = { baseDelayMs: 10, timeoutMs: 500 }) {
  const live = await liveServer()
  const session = await live.client.sessions.create({ goal: GOAL, plan: PLAN })
  const proxy = await faultProxy(live.baseUrl, faults)
  proxies.push(proxy)
  const client = new Goalkeeper({ baseUrl: proxy.url, apiKey: live.agent.apiKey, retry })
  return { ...live, session, proxy, client }
}

describe('sessions.step retries', () => {
  it('retries a timed-out step with the same Idempotency-Key: one step recorded, the first verdict returned', async () => {
    const { client, session, proxy, t, agent } = await behindProxy([{ kind: 'slow', ms: 1500 }])
    const result = await client.sessions.step(session.id, { description: 'design the user schema' })
    expect(result.step_number).toBe(1)
    expect(proxy.seen).toHaveLength(2)
    expect(proxy.seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/)
    expect(proxy.seen[1]!.key).toBe(proxy.seen[0]!.key)
    const log = await t.app.inject({ method: 'GET', url: `/v1/sessions/${session.id}/steps`, headers: agent.headers })
    expect(log.json().items).toHaveLength(1)
  })

  it('waits out a 429 Retry-After and 5xx answers, within the bound', async () => {
    const { client, session, proxy } = await behindProxy([
      { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
      { kind: 'status', status: 503 },
    ])
    const started = Date.now()
    const result = await client.sessions.step(session.id, { description: 'design the user schema' })
    expect(result.verification.recommended_action).toBe('continue')
    expect(proxy.seen).toHaveLength(3)
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
  })

  it('gives up after the bound with the last problem+json', async () => {
    const { client, session, proxy } = await behindProxy([0, 1, 2, 3].map(() => ({ kind: 'status', status: 502 }) as const))
    const err = await client.sessions.step(session.id, { description: 'x' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(GoalkeeperError)
    expect(err).toMatchObject({ status: 502, type: 'urn:problem:fault', detail: 'from the fault proxy' })
    expect(proxy.seen).toHaveLength(3) // 1 + 2 retries
  })

  it('reports a timeout as a GoalkeeperError with status 0 once every attempt timed out', async () => {
    const { client, session, proxy } = await behindProxy(
      [0, 1].map(() => ({ kind: 'slow', ms: 800 }) as const),
      { baseDelayMs: 10, timeoutMs: 300, retries: 1 },
    )
    const err = await client.sessions.step(session.id, { description: 'x' }).catch((e: unknown) => e)
    expect(err).toMatchObject({ name: 'GoalkeeperError', status: 0, type: 'urn:goalkeeper-client:timeout' })
    expect(proxy.seen).toHaveLength(2)
  })

  it('sends a step again with its key after a 409 with Retry-After (a lost write race), not after a 409 without one', async () => {
    const { client, session, proxy, t, agent } = await behindProxy([])
    // Every write of the first request loses its race: the server answers 409 with Retry-After.
    const lose = vi.spyOn(SessionRepository.prototype, 'writeStep').mockResolvedValue(false)
    const first = client.sessions.step(session.id, { description: 'design the user schema' })
    while (lose.mock.calls.length < WRITE_ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, 5))
    lose.mockRestore()
    // The client waits out Retry-After and sends the step again with the same key: recorded once.
    const result = await first
    expect(result.step_number).toBe(1)
    expect(proxy.seen).toHaveLength(2)
    expect(proxy.seen[1]!.key).toBe(proxy.seen[0]!.key)
    const log = await t.app.inject({ method: 'GET', url: `/v1/sessions/${session.id}/steps`, headers: agent.headers })
    expect(log.json().items).toHaveLength(1)

    const { client: other, session: s2, proxy: plain } = await behindProxy([{ kind: 'status', status: 409 }])
    const err = await other.sessions.step(s2.id, { description: 'x' }).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 409 })
    expect(plain.seen).toHaveLength(1)
  })

  it('does not repeat a write that carries no Idempotency-Key', async () => {
    const { client, session, proxy } = await behindProxy([{ kind: 'status', status: 503 }])
    const err = await client.turns.start({ user_message: 'hello', session_id: session.id }).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 503 })
    expect(proxy.seen).toHaveLength(1)
  })
})

it("surfaces the server's own 429 when its Retry-After is longer than the client will wait", async () => {
  const live = await liveServer({ env: { GOALKEEPER_RATE_LIMIT_PER_MINUTE: '2' } }, { retry: { baseDelayMs: 10 } })
  const session = await live.client.sessions.create({ goal: GOAL })
  await live.client.sessions.step(session.id, { description: 'one' })
  const err = await live.client.sessions.step(session.id, { description: 'two' }).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(GoalkeeperError)
  expect(err).toMatchObject({ status: 429 })
  expect((err as GoalkeeperError).retryAfter).toBeGreaterThan(10)
})
