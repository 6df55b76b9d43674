import { openDb, type DbHandle } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { Outbox } from '../../src/webhooks/outbox.js'
import { DEFAULT_DELIVERY_SETTINGS, type DeliverySettings } from '../../src/webhooks/retry-policy.js'
import { WebhooksService } from '../../src/webhooks/service.js'

/** A migrated in-memory database with two agents, a manual clock and the webhook pieces on top. */
export function setup(overrides: Partial<DeliverySettings> = {}, path = ':memory:') {
  const handle: DbHandle = openDb(path)
  runMigrations(handle)
  for (const id of ['agt_a', 'agt_b']) {
    handle.sqlite.prepare('INSERT OR IGNORE INTO agents (id, name, created_at) VALUES (?, ?, 0)').run(id, id)
  }
  const clock = { now: Date.parse('2026-11-22T09:00:00.000Z') }
  const now = () => clock.now
  const settings: DeliverySettings = { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: true, ...overrides }
  const service = new WebhooksService(handle.sqlite, now, settings)
  const dispatcher = new Dispatcher({ handle, settings, clock: now, random: () => 0.5 })
  return {
    handle,
    outbox: new Outbox(handle.sqlite),
    clock,
    settings,
    service,
    dispatcher,
    advance(ms: number) {
      clock.now += ms
    },
    deliveryRows() {
      return handle.sqlite
        .prepare('SELECT state, attempts, next_attempt_at AS next, claimed_at AS claimed FROM webhook_deliveries')
        .all() as { state: string; attempts: number; next: number | null; claimed: number | null }[]
    },
    async close() {
      await dispatcher.stop(1000)
      handle.close()
    },
  }
}
