import { Cron } from 'croner'
import type { SqlDatabase } from '../db/database.js'
import type { Clock } from '../engine/clock.js'
import { fireDue } from './fire.js'
import type { ReminderRepository, Claim } from './repository.js'
import type { SettingsService, AgentSettings } from './settings.js'
import type { Dispatcher } from '../webhooks/dispatcher.js'

export interface TickerOptions {
  /** The reminders' rows, and the database their claims and fires are written in. */
  repo: ReminderRepository
  /** The agents' settings: their timezone and quiet hours decide how a reminder fires. */
  settings: SettingsService
  clock: Clock
  /** Runs on the same tick after reminders are fired; omitted in tests that only look at the outbox. */
  dispatcher?: Dispatcher
  /** Reminders claimed per transaction. */
  batchSize?: number
  /** A tick stops claiming after this long and leaves the rest to the next tick. */
  tickBudgetMs?: number
  /**
   * How long a claim keeps a due reminder from every other ticker (replica). A ticker that dies
   * between claim and fire delays those reminders by at most this long; a batch must fire well
   * within it (a fire after the lease ran out finds its claim retaken and leaves the row alone).
   */
  leaseMs?: number
  onError?: (err: unknown) => void
}

export interface TickResult {
  fired: number
  held: number
  skipped: number
}

/**
 * The one scheduler timer: a croner job every second (no overlap) that fires due reminders
 * in batches, then pumps the webhook dispatcher. A batch is first claimed (a lease: each due
 * reminder gets `claimed_until`, committed at once, so other replicas skip it), then fired in
 * one transaction: each claimed row is re-read locked and still under this lease, `fireDue`
 * writes its fires, outbox messages and advance, and the claim is released, all committing
 * together. A ticker killed between the two leaves its claims to expire; the next ticker to
 * claim after that fires them. The (reminder_id, scheduled_for) key of `reminder_fires` makes a
 * second announcement of one occurrence impossible whoever fires it.
 */
export class Ticker {
  private readonly db: SqlDatabase
  private readonly repo: ReminderRepository
  private readonly settings: SettingsService
  private readonly clock: Clock
  private readonly dispatcher: Dispatcher | undefined
  private readonly batchSize: number
  private readonly tickBudgetMs: number
  private readonly leaseMs: number
  private readonly onError: (err: unknown) => void
  private task: Cron | undefined
  /** The task's last tick (before the first, the recovery): stop() waits for it, so its claims are fired or given back before the database closes. */
  private running: Promise<void> | undefined
  /** Claims whose fire failed, tried first on the next tick. */
  private held: Claim[] = []

  constructor(opts: TickerOptions) {
    this.db = opts.repo.db
    this.repo = opts.repo
    this.settings = opts.settings
    this.clock = opts.clock
    this.dispatcher = opts.dispatcher
    this.batchSize = opts.batchSize ?? 500
    this.tickBudgetMs = opts.tickBudgetMs ?? 500
    this.leaseMs = opts.leaseMs ?? 5_000
    this.onError = opts.onError ?? (() => {})
  }

  /** Fires everything due at `nowMs` (batch by batch, within the tick budget), then pumps delivery. */
  async tick(nowMs: number = this.clock()): Promise<TickResult> {
    const out: TickResult = { fired: 0, held: 0, skipped: 0 }
    const started = performance.now()
    // Claims a failed fire left (the database away or too slow), while their lease still keeps them ours.
    const held = this.held.filter((c) => c.claimed_until > nowMs)
    this.held = []
    if (held.length > 0) await this.fireClaimed(held, nowMs, out)
    for (;;) {
      const claims = await this.repo.claimDue(nowMs, nowMs + this.leaseMs, this.batchSize)
      if (claims.length === 0) break
      await this.fireClaimed(claims, nowMs, out)
      // Not `claims.length < batchSize`: another replica's locked rows may have cut the batch short.
      if (performance.now() - started > this.tickBudgetMs) break
    }
    if (this.dispatcher) await this.dispatcher.pump()
    return out
  }

  /**
   * One transaction: every claim still ours is fired (or found moved on) and released. When it
   * fails, the claims are kept for the next tick instead of waiting out their lease: a claim that
   * has meanwhile been retaken, or whose fire did commit after all, is found no longer ours then.
   */
  private async fireClaimed(claims: readonly Claim[], nowMs: number, out: TickResult): Promise<void> {
    const batch: TickResult = { fired: 0, held: 0, skipped: 0 }
    try {
      await this.db.transaction(async () => {
        const byAgent = new Map<string, AgentSettings>()
        // Claims come soonest first; rows are locked in that order, as every ticker locks them.
        for (const claim of claims) {
          const row = await this.repo.claimed(claim)
          // Retaken by another ticker after the lease ran out, or deleted meanwhile.
          if (!row) continue
          await this.repo.release(claim)
          // A patch, a manual trigger or a turn may have moved it on since the claim.
          if (row.next_fire_at === null || row.next_fire_at > nowMs) continue
          let s = byAgent.get(row.agent_id)
          if (!s) byAgent.set(row.agent_id, (s = await this.settings.get(row.agent_id)))
          const done = await fireDue(this.repo, row, nowMs, s)
          if (done.kind === 'fired') batch.fired += done.announced
          else batch[done.kind]++
        }
      })
    } catch (err) {
      this.held.push(...claims)
      throw err
    }
    out.fired += batch.fired
    out.held += batch.held
    out.skipped += batch.skipped
  }

  /**
   * Starts the per-second task (server.ts, after listen), after the dispatcher's recovery of
   * delivery claims a crash left (the delivery repository decides which: none on PostgreSQL, where
   * they may be another replica's live ones). Reminder claims are always left to their leases.
   */
  start(): void {
    if (this.task) return
    const recovered = Promise.resolve()
      .then(async () => {
        await this.dispatcher?.recover()
      })
      .catch((err: unknown) => this.onError(err))
    this.running = recovered
    // `protect`: a tick still running when the next second comes is not started again beside it.
    const run = async () => {
      try {
        await recovered
        await this.tick()
      } catch (err) {
        this.onError(err)
      }
    }
    this.task = new Cron('* * * * * *', { protect: true }, () => (this.running = run()))
  }

  /**
   * Stops ticking and waits for a tick under way (croner's stop() does not), then lets in-flight
   * deliveries finish for up to `graceMs` (the rest stay queued).
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.task?.stop()
    this.task = undefined
    await this.running
    await this.dispatcher?.stop(graceMs)
  }
}
