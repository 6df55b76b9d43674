import type Database from 'better-sqlite3'
import cron, { type ScheduledTask } from 'node-cron'
import type { DbHandle } from '../db/client.js'
import type { Clock } from '../engine/clock.js'
import { fireReminder } from './fire.js'
import type { ReminderRow } from './model.js'
import { SettingsService, type AgentSettings } from './settings.js'
import type { Dispatcher } from '../webhooks/dispatcher.js'
import { planFire } from './fire-plan.js'

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
 * The one scheduler timer: a node-cron task every second (no overlap) that fires due reminders
 * from the indexed `next_fire_at`, in batches, then pumps the webhook dispatcher. Each reminder's
 * fires, outbox messages and advance commit together (`fireReminder`, shared with trigger now);
 * the (reminder_id, scheduled_for) key of `reminder_fires` makes a second fire of the same
 * occurrence impossible.
 */
export class Ticker {
  private readonly sqlite: Database.Database
  private readonly clock: Clock
  private readonly dispatcher: Dispatcher | undefined
  private readonly batchSize: number
  private readonly tickBudgetMs: number
  private readonly onError: (err: unknown) => void
  private readonly settings: SettingsService
  private readonly dueStmt: Database.Statement<[number, number], ReminderRow>
  private readonly runBatch: (rows: ReminderRow[], nowMs: number, out: TickResult) => void
  private task: ScheduledTask | undefined

  constructor(opts: TickerOptions) {
    const { handle } = opts
    this.sqlite = handle.sqlite
    this.clock = opts.clock
    this.dispatcher = opts.dispatcher
    this.batchSize = opts.batchSize ?? 500
    this.tickBudgetMs = opts.tickBudgetMs ?? 500
    this.onError = opts.onError ?? (() => {})
    this.settings = new SettingsService(handle.sqlite, opts.clock)
    const db = handle.sqlite
    this.dueStmt = db.prepare(
      'SELECT * FROM reminders WHERE next_fire_at IS NOT NULL AND next_fire_at <= ? ORDER BY next_fire_at LIMIT ?',
    )
    const getHold = db.prepare<[string], { scheduled_for: number; held_at: number }>(
      'SELECT scheduled_for, held_at FROM reminder_holds WHERE reminder_id = ?',
    )
    // A stale hold is replaced whole: its scheduled_for belongs to the old schedule too.
    const putHold = db.prepare(
      'INSERT INTO reminder_holds (reminder_id, scheduled_for, held_at) VALUES (?, ?, ?) ON CONFLICT (reminder_id) DO UPDATE SET scheduled_for = excluded.scheduled_for, held_at = excluded.held_at',
    )
    const dropHold = db.prepare('DELETE FROM reminder_holds WHERE reminder_id = ?')
    const setNext = db.prepare('UPDATE reminders SET next_fire_at = @next, updated_at = @now WHERE id = @id')
    const skip = db.prepare(`UPDATE reminders SET status = @status, next_fire_at = @next, updated_at = @now,
      snooze_until = NULL WHERE id = @id`)

    this.runBatch = db.transaction((rows: ReminderRow[], nowMs: number, out: TickResult) => {
      const settingsByAgent = new Map<string, AgentSettings>()
      for (const row of rows) {
        let s = settingsByAgent.get(row.agent_id)
        if (!s) settingsByAgent.set(row.agent_id, (s = this.settings.get(row.agent_id)))
        const h = getHold.get(row.id)
        // A hold older than the reminder's last change belongs to a schedule that no longer applies.
        const hold = h && h.held_at >= row.updated_at ? h : null
        const plan = planFire(row, nowMs, s, hold)
        if (plan.kind === 'hold') {
          putHold.run(row.id, plan.scheduled_for, nowMs)
          setNext.run({ id: row.id, next: plan.next_fire_at, now: nowMs })
          out.held++
          continue
        }
        if (h) dropHold.run(row.id)
        if (plan.kind === 'skip') {
          skip.run({ id: row.id, status: plan.status, next: plan.next_fire_at, now: nowMs })
          out.skipped++
          continue
        }
        // The same state change and announcement as a manual trigger; see fireReminder.
        out.fired += fireReminder(this.sqlite, row, nowMs, s.timezone, plan.fires).announced
      }
    })
  }

  /** Fires everything due at `nowMs` (batch by batch, within the tick budget), then pumps delivery. */
  tick(nowMs: number = this.clock()): TickResult {
    const out: TickResult = { fired: 0, held: 0, skipped: 0 }
    const started = performance.now()
    for (;;) {
      const rows = this.dueStmt.all(nowMs, this.batchSize)
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
