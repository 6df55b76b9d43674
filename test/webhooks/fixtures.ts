import type { DbHandle } from '../../src/db/client.js'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { Outbox } from '../../src/webhooks/outbox.js'
import { DEFAULT_DELIVERY_SETTINGS, type DeliverySettings } from '../../src/webhooks/retry-policy.js'
import { WebhooksService } from '../../src/webhooks/service.js'
import { afterEach, beforeEach } from 'vitest'
import { openTestDatabase } from '../helpers.js'
import { Receiver } from './receiver.js'

export type DeliveryRow = { state: string; attempts: number; next: number | null; claimed: number | null }

/** A migrated database of the run's backend with two agents, a manual clock and the webhook pieces on top. */
export async function setup(overrides: Partial<DeliverySettings> = {}, given?: DbHandle) {
  const handle: DbHandle = given ?? (await openTestDatabase())
  const db = handle.db
  for (const id of ['agt_a', 'agt_b']) {
    await db.run('INSERT INTO agents (id, name, created_at) VALUES (?, ?, 0) ON CONFLICT DO NOTHING', [id, id])
  }
  const clock = { now: Date.parse('2026-11-22T09:00:00.000Z') }
  const now = () => clock.now
  const settings: DeliverySettings = { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: true, ...overrides }
  const service = new WebhooksService(db, now, settings)
  const dispatcher = new Dispatcher({ db, settings, clock: now, random: () => 0.5 })
  return {
    handle,
    db,
    outbox: new Outbox(db),
    clock,
    settings,
    service,
    dispatcher,
    advance(ms: number) {
      clock.now += ms
    },
    deliveryRows(): Promise<DeliveryRow[]> {
      return db.all<DeliveryRow>('SELECT state, attempts, next_attempt_at AS next, claimed_at AS claimed FROM webhook_deliveries ORDER BY id')
    },
    async count(table: string): Promise<number> {
      return (await db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n
    },
    /** Stops the dispatcher; the database is closed (and dropped) after the test by openTestDatabase. */
    async close() {
      await dispatcher.stop(1000)
    },
  }
}

export type WebhookEnv = Awaited<ReturnType<typeof setup>>

/** Before each test, a receiver on 127.0.0.1 and a fresh `setup()`, handed to `use`; both closed after it. */
export function eachTest(use: (rx: Receiver, env: WebhookEnv) => void): void {
  let rx: Receiver
  let env: WebhookEnv
  beforeEach(async () => {
    rx = await new Receiver().start()
    env = await setup()
    use(rx, env)
  })
  afterEach(async () => {
    await env.close()
    await rx.stop()
  })
}
