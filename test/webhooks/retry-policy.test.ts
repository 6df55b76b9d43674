import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { classifyStatus, failingTooLong, nextAttemptAt, parseRetryAfter } from '../../src/webhooks/retry-policy.js'

const schedule = { retrySchedule: [5, 300, 1800] }

describe('retry policy', () => {
  it('classifies 2xx as success, 410 as gone, everything else (3xx too) as retry', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 599 }), (s) => {
        const k = classifyStatus(s, null, 0).kind
        expect(k).toBe(s >= 200 && s < 300 ? 'success' : s === 410 ? 'gone' : 'retry')
      }),
    )
  })

  it('jitters scheduled delays within ±10 % and stops after the schedule', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (attempt, r) => {
        const at = nextAttemptAt(attempt, { retryAfterMs: null }, 1_000, schedule, () => r)
        const base = schedule.retrySchedule[attempt - 1]
        if (base === undefined) expect(at).toBeNull()
        else {
          expect(at! - 1_000).toBeGreaterThanOrEqual(base * 900 - 1)
          expect(at! - 1_000).toBeLessThanOrEqual(base * 1100 + 1)
        }
      }),
    )
  })

  it('lets Retry-After replace the scheduled delay, but not revive an exhausted schedule', () => {
    expect(nextAttemptAt(1, { retryAfterMs: 42_000 }, 0, schedule)).toBe(42_000)
    expect(nextAttemptAt(4, { retryAfterMs: 42_000 }, 0, schedule)).toBeNull()
  })

  it('parses Retry-After seconds and HTTP dates, clamps, and ignores garbage', () => {
    const now = Date.parse('2026-11-22T09:00:00Z')
    expect(parseRetryAfter('30', now)).toBe(30_000)
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:02:00 GMT', now)).toBe(120_000)
    expect(parseRetryAfter('Sun, 22 Nov 2026 08:00:00 GMT', now)).toBe(0)
    expect(parseRetryAfter('99999999', now)).toBe(86_400_000)
    expect(parseRetryAfter('soon', now)).toBeNull()
    expect(parseRetryAfter(null, now)).toBeNull()
  })

  it('disables only after the configured hours of failure', () => {
    expect(failingTooLong(null, 1e12, 120)).toBe(false)
    expect(failingTooLong(0, 120 * 3_600_000 - 1, 120)).toBe(false)
    expect(failingTooLong(0, 120 * 3_600_000, 120)).toBe(true)
  })
})
