import closeWithGrace from 'close-with-grace'
import { ConfigError, loadConfig, type Config } from './config.js'
import { startCheckpointer } from './db/checkpointer.js'
import { openDb } from './db/client.js'
import { runMigrations } from './db/migrate.js'
import { buildApp, type App } from './http/app.js'
import { wallClock } from './engine/clock.js'
import { createMetrics } from './metrics.js'
import { Ticker } from './scheduler/ticker.js'
import { Dispatcher } from './webhooks/dispatcher.js'

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])

/**
 * Quick start: with no admin token on a loopback-only server, the first start on an empty
 * database creates one agent and prints its key once, so `npm start` is usable on its own.
 */
function bootstrapAgent(app: App, config: Config): void {
  if (config.adminToken || !LOOPBACK.has(config.host) || app.services.agents.count() > 0) return
  const agent = app.services.agents.create('bootstrap')
  const line = `goalkeeper: created bootstrap agent ${agent.id}; its API key (shown once): ${agent.api_key}`
  process.stdout.write(`\n${line}\nUse it as: Authorization: Bearer ${agent.api_key}\n\n`)
}

/** config → db → migrations → app → listen, with graceful shutdown. Returns the started app. */
export async function start(env: Record<string, string | undefined> = process.env): Promise<App> {
  const config = loadConfig(env)
  const handle = openDb(config.dbPath)
  runMigrations(handle)
  const app = await buildApp({ config, handle, metrics: createMetrics({ processMetrics: true }), closeHandleOnClose: true })
  // The scheduler lives here, not in buildApp: tests drive `tick(now)` themselves. Its onClose
  // hook runs before the DB closes: stop ticking, let in-flight deliveries finish (bounded), and
  // leave everything else queued in the outbox for the next start.
  const onError = (err: unknown) => app.log.error({ err }, 'scheduler error')
  const dispatcher = new Dispatcher({
    handle,
    settings: config.webhook,
    clock: wallClock,
    onError,
    onAttempt: (outcome) => app.metrics.webhookAttempts.inc({ outcome }),
  })
  const ticker = new Ticker({ handle, clock: wallClock, dispatcher, onError })
  app.addHook('onClose', async () => ticker.stop(8_000))
  if (config.walCheckpoint === 'worker' && config.dbPath !== ':memory:') {
    const checkpointer = startCheckpointer(handle.sqlite, {
      onError: (err) => app.log.error({ err }, 'WAL checkpoint worker failed; SQLite checkpoints on commit again'),
    })
    // Runs before the connection closes (onClose hooks run last-added first); that close then
    // checkpoints what is left and removes the WAL file.
    app.addHook('onClose', () => checkpointer.stop())
  }
  bootstrapAgent(app, config)
  await app.listen({ host: config.host, port: config.port })
  ticker.start()
  return app
}

async function main(): Promise<void> {
  let app: App | undefined
  // Installed before start, so a signal during startup also shuts down cleanly.
  // SIGTERM/SIGINT: stop accepting, drain in-flight requests, run onClose hooks, exit 0.
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err) (app?.log ?? console).error({ err }, 'closing after an error')
    else app?.log.info({ signal }, 'shutting down')
    await app?.close()
  })
  try {
    app = await start()
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`)
      process.exit(1)
    }
    throw err
  }
}

// Run only as the entry point (tests import start()).
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  void main()
}
