import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.js'
import { startCheckpointer, type Checkpointer } from './db/checkpointer.js'
import type { DbHandle } from './db/client.js'
import { SqliteDatabase } from './db/sqlite-database.js'
import { wallClock } from './engine/clock.js'
import type { Metrics } from './metrics.js'
import { ReminderRepository } from './reminders/repository.js'
import type { SettingsService } from './reminders/settings.js'
import { Ticker } from './reminders/ticker.js'
import { Dispatcher } from './webhooks/dispatcher.js'

/** How long a stop lets in-flight webhook deliveries finish; the rest stay queued for the next start. */
const DELIVERY_GRACE_MS = 8_000

/**
 * What a server runs besides answering requests: the per-second ticker that fires reminders and
 * sends webhook deliveries through the dispatcher, and on a SQLite file the WAL checkpoint worker
 * (db/checkpointer.ts). server.ts starts it once listening and stops it when the app closes, before
 * the database closes. Tests drive `Ticker.tick(now)` themselves instead.
 */
export class Scheduler {
  private readonly handle: DbHandle
  private readonly log: FastifyBaseLogger
  private readonly ticker: Ticker
  private checkpointer: Checkpointer | undefined

  constructor(deps: { handle: DbHandle; config: Pick<Config, 'webhook' | 'leaseMs'>; metrics: Metrics; log: FastifyBaseLogger; settings: SettingsService }) {
    this.handle = deps.handle
    this.log = deps.log
    const onError = (err: unknown) => deps.log.error({ err }, 'scheduler error')
    const dispatcher = new Dispatcher({
      db: deps.handle.db,
      settings: deps.config.webhook,
      // A claim outlives its attempt: another replica takes a delivery over only once this one cannot still be sending it.
      leaseMs: deps.config.webhook.timeoutMs + deps.config.leaseMs,
      clock: wallClock,
      onError,
      onAttempt: (outcome) => deps.metrics.webhookAttempts.inc({ outcome }),
    })
    this.ticker = new Ticker({ repo: new ReminderRepository(deps.handle.db), settings: deps.settings, clock: wallClock, dispatcher, leaseMs: deps.config.leaseMs, onError })
  }

  start(): void {
    const db = this.handle.db
    if (this.checkpointer === undefined && db instanceof SqliteDatabase && !db.sqlite.memory) {
      const onError = (err: unknown) => this.log.error({ err }, 'WAL checkpoint worker failed; SQLite checkpoints on commit again')
      try {
        this.checkpointer = startCheckpointer(db.sqlite, { onError })
      } catch (err) {
        // Only a speed-up: the service runs on SQLite's own checkpoints without it.
        onError(err)
      }
    }
    this.ticker.start()
  }

  /** Stops ticking, lets in-flight deliveries finish (bounded), then stops the checkpoint worker. */
  async stop(): Promise<void> {
    await this.ticker.stop(DELIVERY_GRACE_MS)
    await this.checkpointer?.stop()
    this.checkpointer = undefined
  }
}
