import fp from 'fastify-plugin'
import type { SqlDatabase } from '../../db/database.js'
import { UnitOfWork } from '../../db/unit-of-work.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's write: the handler passes it to the service that writes (src/db/unit-of-work.ts). */
    uow: UnitOfWork
  }
}

/**
 * Every request gets a unit of work on the app's database. A reply leaves only once what it could
 * have seen is durable: on SQLite the writes of one event-loop turn commit together after it
 * (group commit, src/db/sqlite-database.ts), and a batch that fails to commit turns its replies
 * into errors; on PostgreSQL a transaction has committed when it resolves.
 */
export const unitOfWork = fp<{ db: SqlDatabase }>(
  async (app, { db }) => {
    app.decorateRequest('uow', null as unknown as UnitOfWork)
    app.addHook('onRequest', (request, _reply, done) => {
      request.uow = new UnitOfWork(db)
      done()
    })
    // Callback style: it runs on every reply.
    app.addHook('onSend', (_request, _reply, payload, done) => {
      db.committed().then(() => done(null, payload), done)
    })
  },
  { name: 'unit-of-work', fastify: '5.x' },
)
