/**
 * Child process for test/sessions/crash.test.ts: creates a session on a real SQLite file,
 * runs the shared script of journaled ops (steps, drift checks, reminders), writes the session id
 * and then kills itself with SIGKILL: no clean shutdown, no eviction, no final snapshot.
 */
import { openDb } from '../../src/db/client.js'
import { runMigrations } from '../../src/db/migrate.js'
import { createMetrics } from '../../src/metrics.js'
import { SessionsService } from '../../src/sessions/service.js'
import { CRASH_CLOCK, crashScript } from './crash-script.js'

const handle = openDb(process.env.DB ?? '')
runMigrations(handle)
handle.sqlite.prepare("INSERT INTO agents (id, name, created_at) VALUES ('agt_1', 'a', 0)").run()
const svc = new SessionsService({ db: handle.db, clock: CRASH_CLOCK, metrics: createMetrics() })
const id = await crashScript(svc)
// The journal must be on disk before the kill: SQLite group-commits after the turn.
await handle.db.committed()
process.stdout.write(JSON.stringify({ id }), () => process.kill(process.pid, 'SIGKILL'))
