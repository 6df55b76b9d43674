import { describe, expect, it } from 'vitest'
import { connectionUnusable, databaseFault } from '../../src/db/faults.js'

/** What a driver error looks like: a code (SQLSTATE, SQLITE_…, a socket's) and a message. */
const err = (code: string | undefined, message = 'x') => Object.assign(new Error(message), code === undefined ? {} : { code })

describe('database faults', () => {
  it.each([
    [err('SQLITE_FULL', 'database or disk is full'), 507, 'insufficient_storage'],
    [err('53100', 'could not extend file: No space left on device'), 507, 'insufficient_storage'],
    [err('SQLITE_BUSY'), 503, 'database_busy'],
    [err('40P01', 'deadlock detected'), 503, 'database_busy'],
    [err('57014', 'canceling statement due to statement timeout'), 503, 'database_timeout'],
    [err(undefined, 'Query read timeout'), 503, 'database_timeout'],
    [err('57P01', 'terminating connection due to administrator command'), 503, 'database_unavailable'],
    [err('57P03', 'the database system is starting up'), 503, 'database_unavailable'],
    [err('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), 503, 'database_unavailable'],
    [err(undefined, 'Connection terminated unexpectedly'), 503, 'database_unavailable'],
    [err(undefined, 'timeout exceeded when trying to connect'), 503, 'database_unavailable'],
    [err('53300', 'sorry, too many clients already'), 503, 'database_unavailable'],
  ])('%s → %i %s, with Retry-After', (error, status, code) => {
    const answer = databaseFault(error)
    expect(answer).toMatchObject({ status, code })
    expect(Number(answer!.headers!['retry-after'])).toBeGreaterThan(0)
  })

  it('leaves other errors alone: a constraint, a syntax error, a bug', () => {
    for (const e of [err('23505', 'duplicate key value'), err('42601', 'syntax error'), err('SQLITE_CONSTRAINT_UNIQUE'), new TypeError('x is undefined'), 'text', null]) {
      expect(databaseFault(e)).toBeUndefined()
    }
  })

  it('a connection is dropped, not rolled back, when lost or cut by the client; kept after a statement the server cut', () => {
    expect(connectionUnusable(err(undefined, 'Query read timeout'))).toBe(true)
    expect(connectionUnusable(err('57P01'))).toBe(true)
    expect(connectionUnusable(err('ECONNRESET'))).toBe(true)
    expect(connectionUnusable(err('57014'))).toBe(false)
    expect(connectionUnusable(err('23505'))).toBe(false)
  })
})
