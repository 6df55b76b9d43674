import { AppError } from '../errors.js'

/**
 * Database failures that are the database's state, not the request's fault, each as the answer a
 * client can act on: 503 with `Retry-After` while the database is away or too slow, 507 while its
 * disk is full. The one place such errors are recognised (the error handler asks here), on both
 * dialects. Anything else stays a 500.
 */

/** How long a client should wait, in seconds, by cause. */
const RETRY_AFTER = { unreachable: 5, timeout: 2, busy: 1, full: 60 }

// Node's socket errors and node-postgres's own messages (it gives them no code).
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
const LOST = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
]
/** node-postgres's client-side cut: the server, or the network to it, did not answer in time. */
const READ_TIMEOUT = 'Query read timeout'

/**
 * PostgreSQL SQLSTATEs that end the connection: 08 connection exceptions, 57P01–57P03 a server
 * shutting down, restarting or still starting, 25P03 a session the server ended for idling inside
 * its transaction (a stalled client).
 */
const PG_CONNECTION_ENDED = /^(08...|57P0[123]|25P03)$/
/** And those of a server that cannot take more now: 53300 too many connections, 53200 out of memory. */
const PG_OVERLOADED = /^(53300|53200)$/
/** 40001/40P01: a serialization failure or a deadlock (a repeat succeeds). */
const PG_BUSY = /^(40001|40P01)$/
/** 57014 query_canceled: the statement timeout; 55P03 lock_not_available: a lock timeout. */
const PG_TIMEOUT = /^(57014|55P03)$/

const answer = (status: number, code: string, detail: string, retryAfter: number) => () =>
  new AppError(status, code, detail, { headers: { 'retry-after': String(retryAfter) } })
const unreachable = answer(503, 'database_unavailable', 'The database is unavailable; the request was not completed. Retry shortly.', RETRY_AFTER.unreachable)
const timedOut = answer(
  503,
  'database_timeout',
  'The database did not answer within the statement timeout (a lock held elsewhere, or a stall); the request was not completed. Retry shortly.',
  RETRY_AFTER.timeout,
)
const busy = answer(503, 'database_busy', 'The database is busy with a conflicting write; the request was not completed. Retry shortly.', RETRY_AFTER.busy)
const full = answer(
  507,
  'insufficient_storage',
  "The database's disk is full: nothing was written. Reads still work; writes succeed again once space is freed.",
  RETRY_AFTER.full,
)

/** The answer for a database failure that is the database's state, or undefined for any other error. */
export function databaseFault(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const { code, message } = err as { code?: unknown; message?: unknown }
  if (typeof code === 'string') {
    // better-sqlite3: SQLITE_FULL (ENOSPC on the file or its WAL), extended codes such as SQLITE_BUSY_SNAPSHOT.
    if (code === 'SQLITE_FULL' || code === '53100') return full()
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || PG_BUSY.test(code)) return busy()
    if (code.startsWith('SQLITE_IOERR') || connectionLost(code, message) || PG_OVERLOADED.test(code)) return unreachable()
    if (PG_TIMEOUT.test(code)) return timedOut()
  }
  if (message === READ_TIMEOUT) return timedOut()
  if (connectionLost(undefined, message)) return unreachable()
  return undefined
}

function connectionLost(code: unknown, message: unknown): boolean {
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || PG_CONNECTION_ENDED.test(code))) return true
  return typeof message === 'string' && LOST.some((m) => message.startsWith(m))
}

/**
 * True when the connection a statement failed on cannot be trusted with another (lost, or cut by the
 * client while the server may still be running the statement): it is dropped, not rolled back (the
 * server rolls back the transaction of a connection that ends).
 */
export function connectionUnusable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown }
  return message === READ_TIMEOUT || connectionLost(code, message)
}
