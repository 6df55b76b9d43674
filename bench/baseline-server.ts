/**
 * The benchmark baseline, run as its own process by bench/http.bench.ts: a bare Fastify app with
 * one POST route doing one insert per request and one bare GET route. No auth, no validation, no
 * logging, no engine: the floor that goalkeeper's routes are compared against. The insert is a
 * prepared SQLite one (the same pragmas as src/db/client.ts: WAL, synchronous=NORMAL), or with
 * BASELINE_PG_URL a `pg` INSERT on a pool of goalkeeper's size. Env: PORT, BASELINE_DB, BASELINE_PG_URL.
 */
import Fastify from 'fastify'
import pg from 'pg'
import { Sqlite } from '../src/db/sqlite-driver.js'

const port = Number(process.env.PORT ?? 0)
const pgUrl = process.env.BASELINE_PG_URL

/** Inserts one row and returns its id; `close` releases the database. */
async function openStore(): Promise<{ insert(body: string, at: string): Promise<number>; close(): Promise<void> }> {
  if (pgUrl !== undefined) {
    const pool = new pg.Pool({ connectionString: pgUrl, max: 10 })
    await pool.query('CREATE TABLE IF NOT EXISTS events (id bigserial PRIMARY KEY, body text NOT NULL, created_at text NOT NULL)')
    return {
      insert: async (body, at) => Number((await pool.query('INSERT INTO events (body, created_at) VALUES ($1, $2) RETURNING id', [body, at])).rows[0].id),
      close: () => pool.end(),
    }
  }
  const db = new Sqlite(process.env.BASELINE_DB ?? ':memory:', { timeout: 5000 })
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.exec('CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, body TEXT NOT NULL, created_at TEXT NOT NULL)')
  const insert = db.prepare('INSERT INTO events (body, created_at) VALUES (?, ?)')
  return {
    insert: async (body, at) => Number(insert.run(body, at).lastInsertRowid),
    close: async () => {
      db.close()
    },
  }
}

const store = await openStore()
const app = Fastify({ logger: false })
app.post('/events', async (request, reply) => {
  const id = await store.insert(JSON.stringify(request.body), new Date().toISOString())
  return reply.code(201).send({ id })
})
app.get('/ping', async () => ({ ok: true }))

const shutdown = () => {
  void app.close().then(async () => {
    await store.close()
    process.exit(0)
  })
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)

await app.listen({ host: '127.0.0.1', port })
