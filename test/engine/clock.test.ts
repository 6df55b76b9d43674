import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isoAt } from '../../src/engine/clock.js'

const MAX_DATE = 8.64e15

describe('isoAt', () => {
  it('equals toISOString for any reading, in any order (its per-minute cache never leaks)', () => {
    const near = fc.integer({ min: -3 * 60_000, max: 3 * 60_000 }).map((d) => Date.UTC(2026, 10, 22, 9, 0, 0) + d)
    const reading = fc.oneof(
      near,
      fc.double({ min: -MAX_DATE, max: MAX_DATE, noNaN: true }),
      fc.integer({ min: -62_200_000_000_000, max: 253_500_000_000_000 }), // around years 0 and 9999
      fc.constantFrom(0, -0, -1, 1.5, -1.5, -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999, 253_402_300_800_000),
    )
    fc.assert(
      fc.property(fc.array(reading, { minLength: 1, maxLength: 20 }), (ms) => {
        for (const m of ms) expect(isoAt(m)).toBe(new Date(m).toISOString())
      }),
      { numRuns: 2000 },
    )
  })

  it('throws on an invalid reading as Date does', () => {
    expect(() => isoAt(Number.NaN)).toThrow(RangeError)
    expect(() => isoAt(MAX_DATE + 1)).toThrow(RangeError)
  })
})
