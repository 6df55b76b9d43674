import type Database from 'better-sqlite3'
import fp from 'fastify-plugin'
import { SqliteUnitOfWork } from '../../db/unit-of-work.js'
import { WriteBatch } from '../../db/write-batch.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's write: the handler passes it to the service that writes (src/db/unit-of-work.ts). */
    uow: SqliteUnitOfWork
  }
}

/**
 * Every request gets a unit of work on the app's write batch (group commit, src/db/write-batch.ts).
 * A reply leaves only once the batch it could have seen has committed: anything written or read
 * on the connection while a batch is open waits for that COMMIT, and a batch that fails to commit
 * turns its replies into errors. Closing the app commits what is pending.
 */
export const unitOfWork = fp<{ sqlite: Database.Database }>(
  async (app, { sqlite }) => {
    const batch = new WriteBatch(sqlite)
    app.decorateRequest('uow', null as unknown as SqliteUnitOfWork)
    app.addHook('onRequest', (request, _reply, done) => {
      request.uow = new SqliteUnitOfWork(sqlite, batch)
      done()
    })
    // Callback style: it runs on every reply.
    app.addHook('onSend', (_request, _reply, payload, done) => {
      if (!batch.open) return done(null, payload)
      batch.committed().then(() => done(null, payload), done)
    })
    app.addHook('onClose', async () => batch.flush())
  },
  { name: 'unit-of-work', fastify: '5.x' },
)
