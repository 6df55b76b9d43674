import closeWithGrace from 'close-with-grace'
import { ConfigError, loadConfig } from './config.js'
import { openDatabase } from './db/open.js'
import { loadWordTable } from './engine/similarity/word-info.js'
import { buildApp, type App } from './http/app.js'
import { createMetrics } from './metrics.js'
import { Scheduler } from './scheduler.js'
import { bootstrapAgent, describeListenError, StartupError, unreachableWarning } from './startup.js'

/** config → db → migrations → app → listen, with graceful shutdown. Returns the started app. */
export async function start(env: Record<string, string | undefined> = process.env): Promise<App> {
  const config = loadConfig(env)
  // Every session reads the word table; loaded here, the first request does not wait ~170 ms for it.
  loadWordTable()
  const handle = await openDatabase(config)
  let app: App
  try {
    app = await buildApp({ config, handle, metrics: createMetrics({ processMetrics: true }), closeHandleOnClose: true })
  } catch (err) {
    await handle.close()
    throw err
  }
  // Reminders, webhook deliveries and SQLite's checkpoints, stopped before the database closes
  // (onClose hooks run last-added first, and buildApp added the one that closes it first).
  const scheduler = new Scheduler({ handle, config, metrics: app.metrics, log: app.log, settings: app.services.settings })
  app.addHook('onClose', () => scheduler.stop())
  try {
    await app.listen({ host: config.host, port: config.port })
  } catch (err) {
    // Closing runs the hooks above and closes the database (an in-process caller may start again).
    await app.close()
    throw new StartupError(describeListenError(err, config.host, config.port))
  }
  // Only now: a key created before a failed listen would be printed and then lost.
  await bootstrapAgent(app, config)
  const warning = unreachableWarning(config, await app.services.agents.count())
  if (warning) app.log.warn(warning)
  scheduler.start()
  // Records an earlier run (or another replica) stored and never applied; then a sweep now and then.
  app.services.otlp.applier.start()
  return app
}

/** A second signal this soon after the first is the same stop, not a demand to force it. */
const REPEATED_SIGNAL_MS = 1000

/** Runs the server until a signal stops it (scripts/start.mjs, `npm start`, calls this). */
export async function main(): Promise<void> {
  let app: App | undefined
  // Installed before start, so a signal during startup also shuts down cleanly: stop accepting,
  // drain in-flight requests, run onClose hooks, exit 0 (1 after an error or past the delay).
  const graceful = closeWithGrace({ delay: 10_000, skip: ['SIGINT', 'SIGTERM'] }, async ({ err }) => {
    if (err) (app?.log ?? console).error({ err }, 'closing after an error')
    await app?.close()
  })
  // SIGINT and SIGTERM are handled here: Ctrl-C under `npm start` arrives twice (from the terminal,
  // and forwarded by npm), where close-with-grace would take the second for a demand to force the
  // exit (code 1). A signal more than a second after the first still forces it.
  let stoppingSince: number | undefined
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stoppingSince === undefined) {
        stoppingSince = Date.now()
        app?.log.info({ signal }, 'shutting down')
        graceful.close()
      } else if (Date.now() - stoppingSince > REPEATED_SIGNAL_MS) {
        process.stderr.write(`second ${signal}, exiting\n`)
        process.exit(1)
      }
    })
  }
  try {
    app = await start()
  } catch (err) {
    if (err instanceof ConfigError || err instanceof StartupError) {
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
