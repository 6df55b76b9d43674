import { describe, expect, it } from 'vitest'
import type { DbHandle } from '../../src/db/client.js'
import { hashBody, IDEMPOTENCY_TTL_MS, IdempotencyService, type IdempotencyRequest } from '../../src/idempotency/service.js'
import { openTestDatabase } from '../helpers.js'

const T0 = Date.parse('2026-03-01T12:00:00Z')
const req: IdempotencyRequest = { scope: 'admin', agentId: null, key: 'k-1', method: 'POST', path: '/v1/agents', bodyHash: hashBody({ name: 'x' }) }

// Closed by the helpers' own cleanup after each test.
let handle: DbHandle | undefined

/** A service on a fresh database whose clock reads `now.at`, with one record stored at T0. */
async function storedAt(): Promise<{ service: IdempotencyService; now: { at: number } }> {
  handle = await openTestDatabase()
  const now = { at: T0 }
  const service = new IdempotencyService(handle.db, () => now.at)
  await handle.db.transaction(() => service.save(req, 201, '{"first":true}'))
  return { service, now }
}

describe('Idempotency-Key expiry', () => {
  it('replays a record exactly 24 h old and treats one a millisecond older as new', async () => {
    const { service, now } = await storedAt()
    now.at = T0 + IDEMPOTENCY_TTL_MS
    expect(await service.lookup(req)).toEqual({ kind: 'replay', status: 201, body: '{"first":true}' })
    now.at = T0 + IDEMPOTENCY_TTL_MS + 1
    expect((await service.lookup(req)).kind).toBe('new')
  })

  it('does not let a new response overwrite a record the lookup still replays', async () => {
    const { service, now } = await storedAt()
    // The boundary the lookup calls live must be live for the claim too: a 409, not a second write.
    now.at = T0 + IDEMPOTENCY_TTL_MS
    // Sending it again replays the live record: the 409 says a repeat resolves it.
    await expect(handle!.db.transaction(() => service.save(req, 201, '{"second":true}'))).rejects.toMatchObject({ status: 409, headers: { 'retry-after': '1' } })
    expect(await service.lookup(req)).toMatchObject({ kind: 'replay', body: '{"first":true}' })
    // Past it, the lookup says new and the claim takes the key over.
    now.at = T0 + IDEMPOTENCY_TTL_MS + 1
    expect((await service.lookup(req)).kind).toBe('new')
    await handle!.db.transaction(() => service.save(req, 201, '{"second":true}'))
    expect(await service.lookup(req)).toMatchObject({ kind: 'replay', body: '{"second":true}' })
  })
})
