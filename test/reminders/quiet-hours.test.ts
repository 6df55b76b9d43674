import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isQuietHours, quietHoursEnd } from '../../src/reminders/quiet-hours.js'

const t = Date.parse
const utc = (start: string, end: string) => ({ timezone: 'UTC', quiet_hours: { start, end } })

describe('isQuietHours', () => {
  it('same-day range: start inclusive, end exclusive', async () => {
    const s = utc('13:00', '15:00')
    expect(isQuietHours(s, t('2026-11-22T12:59:00Z'))).toBe(false)
    expect(isQuietHours(s, t('2026-11-22T13:00:00Z'))).toBe(true)
    expect(isQuietHours(s, t('2026-11-22T14:59:00Z'))).toBe(true)
    expect(isQuietHours(s, t('2026-11-22T15:00:00Z'))).toBe(false)
  })

  it('overnight range wraps midnight', async () => {
    const s = utc('22:00', '07:00')
    expect(isQuietHours(s, t('2026-11-22T21:59:00Z'))).toBe(false)
    expect(isQuietHours(s, t('2026-11-22T22:00:00Z'))).toBe(true)
    expect(isQuietHours(s, t('2026-11-23T00:00:00Z'))).toBe(true)
    expect(isQuietHours(s, t('2026-11-23T06:59:00Z'))).toBe(true)
    expect(isQuietHours(s, t('2026-11-23T07:00:00Z'))).toBe(false)
  })

  it('start == end is never quiet; no quiet hours is never quiet', async () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4e12 }), (ms) => {
        expect(isQuietHours(utc('10:00', '10:00'), ms)).toBe(false)
        expect(isQuietHours({ timezone: 'UTC', quiet_hours: null }, ms)).toBe(false)
      }),
    )
  })

  it('00:00-23:59 leaves 23:59 out', async () => {
    expect(isQuietHours(utc('00:00', '23:59'), t('2026-11-22T23:58:00Z'))).toBe(true)
    expect(isQuietHours(utc('00:00', '23:59'), t('2026-11-22T23:59:00Z'))).toBe(false)
  })

  it('evaluates in the agent timezone, not the server one', async () => {
    // 22:00-07:00 in Tokyo (UTC+9) = 13:00Z-22:00Z.
    const tokyo = { timezone: 'Asia/Tokyo', quiet_hours: { start: '22:00', end: '07:00' } }
    expect(isQuietHours(tokyo, t('2026-11-22T12:59:00Z'))).toBe(false)
    expect(isQuietHours(tokyo, t('2026-11-22T13:00:00Z'))).toBe(true)
    expect(isQuietHours(tokyo, t('2026-11-22T21:59:00Z'))).toBe(true) // 06:59 local, end - 1 min
    expect(isQuietHours(tokyo, t('2026-11-22T22:00:00Z'))).toBe(false) // 07:00 local
    // New York shifts with DST: 22:00 local is 02:00Z in summer, 03:00Z in winter.
    const ny = { timezone: 'America/New_York', quiet_hours: { start: '22:00', end: '07:00' } }
    expect(isQuietHours(ny, t('2026-07-01T02:00:00Z'))).toBe(true)
    expect(isQuietHours(ny, t('2026-12-01T02:00:00Z'))).toBe(false)
  })
})

describe('quietHoursEnd', () => {
  it('is the next local end time while quiet, and now otherwise', async () => {
    const s = { timezone: 'Europe/Paris', quiet_hours: { start: '22:00', end: '07:00' } }
    expect(new Date(quietHoursEnd(s, t('2026-11-22T22:30:00Z'))).toISOString()).toBe('2026-11-23T06:00:00.000Z')
    expect(quietHoursEnd(s, t('2026-11-22T12:00:00Z'))).toBe(t('2026-11-22T12:00:00Z'))
  })

  it('the end instant is never quiet and comes after the start', async () => {
    const s = { timezone: 'America/New_York', quiet_hours: { start: '23:30', end: '02:30' } }
    fc.assert(
      fc.property(fc.integer({ min: t('2026-01-01T00:00:00Z'), max: t('2027-01-01T00:00:00Z') }), (ms) => {
        const end = quietHoursEnd(s, ms)
        expect(end).toBeGreaterThanOrEqual(ms)
        expect(isQuietHours(s, end)).toBe(false)
      }),
      { numRuns: 300 },
    )
  })
})
