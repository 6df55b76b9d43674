import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Agent } from 'undici'
import type { SqlDatabase } from '../db/database.js'
import type { Clock } from '../engine/clock.js'
import { cutText } from '../engine/similarity/text.js'
import { newId } from '../ids.js'
import { DeliveryRepository, type AttemptRecord, type ClaimedDelivery } from './delivery-repository.js'
import { classifyStatus, type AttemptOutcome, type DeliverySettings } from './retry-policy.js'
import { activeSecrets, signatureHeader } from './sign.js'
import { guardedLookup, literalHostForbidden } from './url-guard.js'
import { loadUndici } from '../lazy.js'

/** Between tries of an attempt's record that failed (the database away or too slow). */
const RECORD_RETRY_MS = 1000

type Undici = typeof import('undici')

export interface DispatcherOptions {
  db: SqlDatabase
  settings: DeliverySettings
  clock: Clock
  /** Deliveries in flight at once. */
  concurrency?: number
  /**
   * How long a claim hides a delivery from other claims (other replicas' too): a claimer killed
   * mid-delivery only delays it this long, then any dispatcher sends it again (same `webhook-id`).
   */
  leaseMs?: number
  random?: () => number
  onError?: (err: unknown) => void
  /** Told the outcome of every recorded attempt (metrics). */
  onAttempt?: (outcome: 'success' | 'failure' | 'gone') => void
}

/**
 * Moves due deliveries from the outbox to their endpoints. `pump()` claims what is due (up to the
 * free concurrency) and starts it; each completion pumps again, so a backlog drains without
 * waiting for the next tick. Every attempt is recorded before the delivery is released. Every
 * replica runs one on the same database: a claim is a lease, so each delivery is in flight at one
 * dispatcher at a time (at least once overall, never two messages for one event).
 */
export class Dispatcher {
  private readonly deliveries: DeliveryRepository
  private readonly settings: DeliverySettings
  private readonly clock: Clock
  private readonly concurrency: number
  private readonly leaseMs: number
  /** Created with the first delivery (see `loadUndici`). */
  private agent: Agent | undefined
  private readonly connect: ConstructorParameters<Undici['Agent']>[0]
  private readonly inFlight = new Set<Promise<void>>()
  private readonly abort = new AbortController()
  private readonly onError: (err: unknown) => void
  private readonly onAttempt: (outcome: 'success' | 'failure' | 'gone') => void
  private stopping = false
  /** The claim under way: one at a time, so two pumps never claim beyond the free concurrency. */
  private pumping: Promise<number> | undefined
  private pumpAgain = false

  constructor(opts: DispatcherOptions) {
    this.settings = opts.settings
    this.clock = opts.clock
    this.concurrency = opts.concurrency ?? 32
    this.onError = opts.onError ?? (() => {})
    this.onAttempt = opts.onAttempt ?? (() => {})
    this.leaseMs = opts.leaseMs ?? opts.settings.timeoutMs + 30_000
    this.deliveries = new DeliveryRepository(opts.db, opts.settings, this.leaseMs, opts.random)
    // The guarded lookup runs on every connection, so the address checked is the address used.
    this.connect = {
      connect: opts.settings.allowPrivateUrls ? {} : { lookup: guardedLookup as never },
      keepAliveTimeout: 10_000,
    }
  }

  private async http(): Promise<{ request: Undici['request']; agent: Agent }> {
    const u = await loadUndici()
    this.agent ??= new u.Agent(this.connect)
    return { request: u.request, agent: this.agent }
  }

  /** Releases claims left by a process that died mid-delivery (call once at start; SQLite only, see DeliveryRepository). */
  recover(): Promise<number> {
    return this.deliveries.releaseStaleClaims(this.clock())
  }

  /**
   * Claims due deliveries up to the free concurrency and starts them; resolves to how many. A call
   * while a claim is under way resolves with that claim and claims again after it.
   */
  pump(): Promise<number> {
    if (this.stopping) return Promise.resolve(0)
    if (this.pumping !== undefined) {
      this.pumpAgain = true
      return this.pumping
    }
    const pumping = this.claimAndStart().finally(() => {
      this.pumping = undefined
      if (this.pumpAgain) {
        this.pumpAgain = false
        this.pump().catch(this.onError)
      }
    })
    this.pumping = pumping
    return pumping
  }

  private async claimAndStart(): Promise<number> {
    const free = this.concurrency - this.inFlight.size
    if (free <= 0) return 0
    const claimed = await this.deliveries.claim(this.clock(), free)
    for (const d of claimed) {
      const p: Promise<void> = this.deliver(d)
        .catch(this.onError)
        .finally(() => {
          this.inFlight.delete(p)
          // Claim in chunks (half the concurrency at a time) rather than one row per completion.
          if (!this.stopping && this.inFlight.size <= this.concurrency / 2) this.pump().catch(this.onError)
        })
      this.inFlight.add(p)
    }
    return claimed.length
  }

  get busy(): number {
    return this.inFlight.size
  }

  /** Resolves when nothing is in flight or being claimed (completions may start more; this waits for those too). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0 || this.pumping !== undefined) await Promise.allSettled([...this.inFlight, this.pumping])
  }

  /** Delivers everything due now, including what becomes due while it runs (tests, catch-up). */
  async runDue(): Promise<void> {
    await this.pump()
    await this.drain()
  }

  /**
   * Stops claiming, lets in-flight deliveries finish for up to `graceMs`, then aborts the rest.
   * Aborted deliveries are not recorded: their claims are given back, so the next dispatcher to
   * pump (another replica, or this one's next start) sends them again.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true
    let timer: NodeJS.Timeout | undefined
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs)
      timer.unref()
    })
    await Promise.race([this.drain(), grace])
    clearTimeout(timer)
    this.abort.abort()
    await this.drain()
    const agent = this.agent
    if (agent !== undefined) await agent.close().catch(() => agent.destroy())
  }

  private readonly recordQueue: [ClaimedDelivery, AttemptRecord][] = []
  private recordFlush: Promise<void> | null = null

  /** Queues an attempt record; everything queued in this event-loop turn commits together (or fails together). */
  private recordSoon(d: ClaimedDelivery, r: AttemptRecord): Promise<void> {
    this.recordQueue.push([d, r])
    this.recordFlush ??= new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        const batch = this.recordQueue.splice(0)
        this.recordFlush = null
        this.deliveries.recordMany(batch).then(resolve, reject)
      }),
    )
    return this.recordFlush
  }

  /**
   * Records an attempt, trying again while the claim's lease lasts when the record fails (the
   * database away or too slow): a delivery sent but never recorded is sent again by the next claim
   * after the lease. Past the lease, or when shutting down, it is left to that claim.
   */
  private async record(d: ClaimedDelivery, r: AttemptRecord): Promise<void> {
    for (;;) {
      try {
        return await this.recordSoon(d, r)
      } catch (err) {
        this.onError(err)
        if (this.abort.signal.aborted || this.clock() + RECORD_RETRY_MS >= d.claimedAt + this.leaseMs) return
        await sleep(RECORD_RETRY_MS, undefined, { signal: this.abort.signal }).catch(() => undefined)
      }
    }
  }

  private async deliver(d: ClaimedDelivery): Promise<void> {
    const attemptAt = this.clock()
    const timestampSec = Math.floor(attemptAt / 1000)
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'goalkeeper-webhooks/1',
      'webhook-id': d.messageId,
      'webhook-timestamp': String(timestampSec),
      'webhook-signature': signatureHeader(activeSecrets(d, attemptAt), d.messageId, timestampSec, d.payload),
    }
    const started = performance.now()
    let outcome: AttemptOutcome
    let statusCode: number | null = null
    let error: string | null = null
    try {
      const url = new URL(d.url)
      if (!this.settings.allowPrivateUrls && literalHostForbidden(url)) throw new Error(`refused non-public address ${url.hostname}`)
      const { request, agent } = await this.http()
      const res = await request(url, {
        method: 'POST',
        headers,
        body: d.payload,
        dispatcher: agent,
        headersTimeout: this.settings.timeoutMs,
        bodyTimeout: this.settings.timeoutMs,
        signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.settings.timeoutMs)]),
      })
      // Always consume the body, or the keep-alive socket is never released.
      await res.body.dump().catch(() => {})
      statusCode = res.statusCode
      const retryAfter = res.headers['retry-after']
      outcome = classifyStatus(statusCode, Array.isArray(retryAfter) ? (retryAfter[0] ?? null) : (retryAfter ?? null), this.clock())
      if (outcome.kind !== 'success') error = statusCode >= 300 && statusCode < 400 ? 'redirect not followed' : `HTTP ${statusCode}`
    } catch (err) {
      if (this.abort.signal.aborted) {
        // Shutting down: the attempt is not recorded, and its claim goes back (the request may have
        // arrived: a receiver may see this webhook-id again, as at-least-once allows).
        await this.deliveries.release(d, this.clock()).catch(this.onError)
        return
      }
      outcome = { kind: 'retry', retryAfterMs: null }
      error = describeError(err, this.settings.timeoutMs)
    }
    await this.record(d, {
      id: newId('evt', attemptAt),
      outcome,
      statusCode,
      error,
      durationMs: Math.round(performance.now() - started),
      createdAt: attemptAt,
      nowMs: this.clock(),
    })
    this.onAttempt(outcome.kind === 'retry' ? 'failure' : outcome.kind)
  }
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } }
  if (e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT') {
    return `timeout after ${timeoutMs} ms`
  }
  const code = e?.code ?? e?.cause?.code
  const msg = e?.message ?? String(err)
  return cutText(code ? `${code}: ${msg}` : msg, 500)
}
