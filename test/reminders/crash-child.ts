/**
 * Child process for the crash tests (test/reminders/crash.test.ts): one scheduler run against a
 * real SQLite file at a fixed instant. MODE=setup creates an agent, a webhook and reminders;
 * MODE=tick recovers claims, fires what is due and delivers it; MODE=claim-and-die fires, claims
 * the deliveries and kills itself with SIGKILL before sending anything; MODE=tick-hang is a tick
 * whose parent kills it (SIGKILL) while a delivery is in flight.
 */
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { RemindersService } from '../../src/reminders/service.js'
import { SettingsService } from '../../src/reminders/settings.js'
import { WebhooksService } from '../../src/webhooks/service.js'
import { Ticker } from '../../src/reminders/ticker.js'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { DEFAULT_DELIVERY_SETTINGS } from '../../src/webhooks/retry-policy.js'

const env = process.env
const [DB, NOW, RECEIVER, MODE] = [env.DB ?? '', env.NOW ?? '0', env.RECEIVER ?? '', env.MODE ?? 'tick']
const now = Number(NOW)
const clock = () => now
const handle = openDb(DB)
runMigrations(handle)
const settings = { ...DEFAULT_DELIVERY_SETTINGS, allowPrivateUrls: true, timeoutMs: 5_000 }

if (MODE === 'setup') {
  handle.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_a', 'a', 0)").run()
  const w = await new WebhooksService(handle.sqlite, clock, settings).create('agt_a', { url: RECEIVER })
  const reminders = new RemindersService(handle.sqlite, new SettingsService(handle.sqlite, clock), clock)
  const ids: Record<string, string> = {}
  for (const p of ['once', 'skip', 'all'] as const) {
    ids[p] = reminders.create('agt_a', { title: p, missed_policy: p, trigger: { type: 'recurring', cron: '0 * * * *' } }).id
  }
  ids.shot = reminders.create('agt_a', { title: 'shot', trigger: { type: 'scheduled', at: new Date(now + 60_000).toISOString() } }).id
  process.stdout.write(JSON.stringify({ secret: w.secret, ids }))
  handle.close()
} else {
  const dispatcher = new Dispatcher({ handle, settings, clock })
  dispatcher.recover()
  if (MODE === 'claim-and-die') {
    // Fire without pumping, claim by hand, and die before anything is sent.
    new Ticker({ handle, clock }).tick(now)
    dispatcher.store.claim(now, 1_000)
    process.kill(process.pid, 'SIGKILL')
  }
  const ticker = new Ticker({ handle, clock, dispatcher })
  const result = ticker.tick(now)
  await dispatcher.runDue()
  await dispatcher.stop(1_000)
  handle.close()
  process.stdout.write(JSON.stringify(result))
}
