import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { SqlDatabase } from '../../db/database.js'

/**
 * One fixed window per caller, counted in the shared database (`rate_limits`), so a limit holds
 * across every replica instead of per process. One statement per request: the upsert opens a new
 * window when the old one has ended and otherwise adds one, returning the count and the window's end.
 */
const COUNT = `INSERT INTO rate_limits (key, count, window_ends) VALUES (@key, 1, @ends)
  ON CONFLICT (key) DO UPDATE SET
    count = CASE WHEN rate_limits.window_ends <= @now THEN 1 ELSE rate_limits.count + 1 END,
    window_ends = CASE WHEN rate_limits.window_ends <= @now THEN @ends ELSE rate_limits.window_ends END
  RETURNING count, window_ends`

/** Ended windows are deleted now and then, so the table holds about one row per recent caller. */
const PRUNE_EVERY = 1000

export function sharedRateLimitStore(db: SqlDatabase): FastifyRateLimitStoreCtor {
  let sincePrune = 0
  const store: FastifyRateLimitStore = {
    incr(key, callback, timeWindow) {
      const now = Date.now()
      db.get<{ count: number; window_ends: number }>(COUNT, { key, now, ends: now + timeWindow }).then(
        (row) => callback(null, { current: row!.count, ttl: Math.max(0, row!.window_ends - now) }),
        (err: Error) => callback(err),
      )
      if (++sincePrune >= PRUNE_EVERY) {
        sincePrune = 0
        db.run('DELETE FROM rate_limits WHERE window_ends <= ?', [now]).catch(() => undefined)
      }
    },
    child: () => store,
  }
  // The plugin constructs its store itself; every instance is the one above.
  return function SharedRateLimitStore() {
    return store
  } as unknown as FastifyRateLimitStoreCtor
}
