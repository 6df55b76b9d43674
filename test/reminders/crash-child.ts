/**
 * Child process for the crash tests (test/reminders/crash.test.ts): one scheduler run against a
 * real SQLite file at a fixed instant. MODE=setup creates an agent, a webhook and reminders;
 * MODE=tick recovers claims, fires what is due and delivers it; MODE=claim-and-die fires, claims
 * the deliveries and kills itself with SIGKILL before sending anything; MODE=tick-hang is a tick
 * whose parent kills it (SIGKILL) while a delivery is in flight; MODE=claim-reminders-and-die
 * claims the due reminders (the ticker's lease) and kills itself before firing them.
 */
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { RemindersService } from '../../src/reminders/service.js'
import { SettingsService } from '../../src/reminders/settings.js'
import { WebhooksService } from '../../src/webhooks/service.js'
import { ReminderRepository } from '../../src/reminders/repository.js'
import { Ticker } from '../../src/reminders/ticker.js'
import { DeliveryRepository } from '../../src/webhooks/delivery-repository.js'
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
  await handle.db.run("INSERT INTO agents (id, name, created_at) VALUES ('agt_a', 'a', 0)")
  const w = await new WebhooksService(handle.db, clock, settings).create('agt_a', { url: RECEIVER })
  const reminders = new RemindersService(new ReminderRepository(handle.db), new SettingsService(new ReminderRepository(handle.db), clock), clock)
  const ids: Record<string, string> = {}
  for (const p of ['once', 'skip', 'all'] as const) {
    ids[p] = (await reminders.create('agt_a', { title: p, missed_policy: p, trigger: { type: 'recurring', cron: '0 * * * *' } })).id
  }
  ids.shot = (await reminders.create('agt_a', { title: 'shot', trigger: { type: 'scheduled', at: new Date(now + 60_000).toISOString() } })).id
  process.stdout.write(JSON.stringify({ secret: w.secret, ids }))
  await handle.close()
} else if (MODE === 'claim-reminders-and-die') {
  await new ReminderRepository(handle.db).claimDue(now, now + 5_000, 500)
  await handle.db.committed()
  process.kill(process.pid, 'SIGKILL')
} else {
  const dispatcher = new Dispatcher({ db: handle.db, settings, clock })
  await dispatcher.recover()
  if (MODE === 'claim-and-die') {
    // Fire without pumping, claim by hand, and die before anything is sent.
    await new Ticker({ repo: new ReminderRepository(handle.db), settings: new SettingsService(new ReminderRepository(handle.db), clock), clock }).tick(now)
    await new DeliveryRepository(handle.db, settings, settings.timeoutMs + 30_000).claim(now, 1_000)
    await handle.db.committed()
    process.kill(process.pid, 'SIGKILL')
  }
  const ticker = new Ticker({ repo: new ReminderRepository(handle.db), settings: new SettingsService(new ReminderRepository(handle.db), clock), clock, dispatcher })
  const result = await ticker.tick(now)
  await dispatcher.runDue()
  await dispatcher.stop(1_000)
  await handle.close()
  process.stdout.write(JSON.stringify(result))
}
