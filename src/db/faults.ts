import { AppError } from '../errors.js'

/**
 * Database failures that are the database's state, not the request's fault, each as the answer a
 * client can act on: 503 with `Retry-After` while the database is away or too slow, 507 while its
 * disk is full. The one place such errors are recognised (the error handler asks here), on both
 * dialects. Anything else stays a 500.
 */

// Node's socket errors and node-postgres's own messages (it gives them no code).
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
const LOST = ['Connection terminated', 'timeout exceeded when trying to connect', 'Client has encountered a connection error and is not queryable', 'Client was closed and is not queryable']
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

/** What a client is told, by cause: the status, the problem type, when to retry (seconds), why. */
const ANSWERS = {
  unreachable: { status: 503, code: 'database_unavailable', retryAfter: 5, detail: 'The database is unavailable; the request was not completed. Retry shortly.' },
  timeout: {
    status: 503,
    code: 'database_timeout',
    retryAfter: 2,
    detail: 'The database did not answer within the statement timeout (a lock held elsewhere, or a stall); the request was not completed. Retry shortly.',
  },
  busy: { status: 503, code: 'database_busy', retryAfter: 1, detail: 'The database is busy with a conflicting write; the request was not completed. Retry shortly.' },
  full: {
    status: 507,
    code: 'insufficient_storage',
    retryAfter: 60,
    detail: "The database's disk is full: nothing was written. Reads still work; writes succeed again once space is freed.",
  },
}

function causeOf(err: object): keyof typeof ANSWERS | undefined {
  const { code, message } = err as { code?: unknown; message?: unknown }
  if (typeof code === 'string') {
    // better-sqlite3: SQLITE_FULL (ENOSPC on the file or its WAL), extended codes such as SQLITE_BUSY_SNAPSHOT.
    if (code === 'SQLITE_FULL' || code === '53100') return 'full'
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || PG_BUSY.test(code)) return 'busy'
    if (code.startsWith('SQLITE_IOERR') || PG_OVERLOADED.test(code)) return 'unreachable'
    if (PG_TIMEOUT.test(code)) return 'timeout'
  }
  if (message === READ_TIMEOUT) return 'timeout'
  if (connectionLost(code, message)) return 'unreachable'
  return undefined
}

/** The answer for a database failure that is the database's state, or undefined for any other error. */
export function databaseFault(err: unknown): AppError | undefined {
  const cause = typeof err === 'object' && err !== null ? causeOf(err) : undefined
  if (cause === undefined) return undefined
  const a = ANSWERS[cause]
  return new AppError(a.status, a.code, a.detail, { headers: { 'retry-after': String(a.retryAfter) } })
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
