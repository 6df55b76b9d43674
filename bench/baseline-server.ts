/**
 * The benchmark baseline, run as its own process by bench/http.bench.ts: a bare Fastify app with
 * one POST route doing one prepared SQLite insert per request (the same pragmas as src/db/client.ts:
 * WAL, synchronous=NORMAL) and one bare GET route. No auth, no validation, no logging, no engine:
 * the floor that goalkeeper's routes are compared against. Env: PORT, BASELINE_DB.
 */
import Database from 'better-sqlite3'
import Fastify from 'fastify'

const port = Number(process.env.PORT ?? 0)
const db = new Database(process.env.BASELINE_DB ?? ':memory:', { timeout: 5000 })
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.pragma('foreign_keys = ON')
db.exec('CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, body TEXT NOT NULL, created_at TEXT NOT NULL)')
const insert = db.prepare('INSERT INTO events (body, created_at) VALUES (?, ?)')

const app = Fastify({ logger: false })
app.post('/events', async (request, reply) => {
  const { lastInsertRowid } = insert.run(JSON.stringify(request.body), new Date().toISOString())
  return reply.code(201).send({ id: Number(lastInsertRowid) })
})
app.get('/ping', async () => ({ ok: true }))

const shutdown = () => {
  void app.close().then(() => {
    db.close()
    process.exit(0)
  })
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)

await app.listen({ host: '127.0.0.1', port })
