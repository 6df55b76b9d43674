import cron, { type ScheduledTask } from 'node-cron'
import type { DbHandle } from '../db/client.js'
import type { Clock } from '../engine/clock.js'
import { fireDue } from './fire.js'
import type { ReminderRow } from './model.js'
import { ReminderStore } from './repository.js'
import { SettingsService, type AgentSettings } from './settings.js'
import type { Dispatcher } from '../webhooks/dispatcher.js'

export interface TickerOptions {
  handle: DbHandle
  clock: Clock
  /** Runs on the same tick after reminders are fired; omitted in tests that only look at the outbox. */
  dispatcher?: Dispatcher
  /** Reminders claimed per transaction. */
  batchSize?: number
  /** A tick stops claiming after this long and leaves the rest to the next tick. */
  tickBudgetMs?: number
  onError?: (err: unknown) => void
}

export interface TickResult {
  fired: number
  held: number
  skipped: number
}

/**
 * The one scheduler timer: a node-cron task every second (no overlap) that takes due reminders
 * from the indexed `next_fire_at` in batches, applies `fireDue` to each (one transaction per
 * batch: each reminder's fires, outbox messages and advance commit together), then pumps the
 * webhook dispatcher. The (reminder_id, scheduled_for) key of `reminder_fires` makes a second
 * fire of the same occurrence impossible.
 */
export class Ticker {
  private readonly store: ReminderStore
  private readonly clock: Clock
  private readonly dispatcher: Dispatcher | undefined
  private readonly batchSize: number
  private readonly tickBudgetMs: number
  private readonly onError: (err: unknown) => void
  private readonly runBatch: (rows: ReminderRow[], nowMs: number, out: TickResult) => void
  private task: ScheduledTask | undefined

  constructor(opts: TickerOptions) {
    const sqlite = opts.handle.sqlite
    this.store = new ReminderStore(sqlite)
    this.clock = opts.clock
    this.dispatcher = opts.dispatcher
    this.batchSize = opts.batchSize ?? 500
    this.tickBudgetMs = opts.tickBudgetMs ?? 500
    this.onError = opts.onError ?? (() => {})
    const settings = new SettingsService(sqlite, opts.clock)
    this.runBatch = sqlite.transaction((rows: ReminderRow[], nowMs: number, out: TickResult) => {
      const byAgent = new Map<string, AgentSettings>()
      for (const row of rows) {
        let s = byAgent.get(row.agent_id)
        if (!s) byAgent.set(row.agent_id, (s = settings.get(row.agent_id)))
        const done = fireDue(this.store, row, nowMs, s)
        if (done.kind === 'fired') out.fired += done.announced
        else out[done.kind]++
      }
    })
  }

  /** Fires everything due at `nowMs` (batch by batch, within the tick budget), then pumps delivery. */
  tick(nowMs: number = this.clock()): TickResult {
    const out: TickResult = { fired: 0, held: 0, skipped: 0 }
    const started = performance.now()
    for (;;) {
      const rows = this.store.dueAll(nowMs, this.batchSize)
      if (rows.length === 0) break
      this.runBatch(rows, nowMs, out)
      if (rows.length < this.batchSize || performance.now() - started > this.tickBudgetMs) break
    }
    if (this.dispatcher) this.dispatcher.pump()
    return out
  }

  /** Starts the per-second task (server.ts, after listen). Recovers claims a crash left behind. */
  start(): void {
    if (this.task) return
    this.dispatcher?.recover()
    this.task = cron.schedule(
      '* * * * * *',
      () => {
        try {
          this.tick()
        } catch (err) {
          this.onError(err)
        }
      },
      { name: 'goalkeeper-ticker', noOverlap: true },
    )
  }

  /** Stops ticking, then lets in-flight deliveries finish for up to `graceMs` (the rest stay queued). */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.task) {
      await this.task.destroy()
      this.task = undefined
    }
    await this.dispatcher?.stop(graceMs)
  }
}
