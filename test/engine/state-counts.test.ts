import fc from 'fast-check'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { StateCounts } from '../../src/engine/session/state-counts.js'
import { measuredInOwnProcess } from './heap.js'

/** What StateCounts replaced: a Map in first-seen order, its oldest entry dropped past `max`. */
function mapModel(max: number) {
  const map = new Map<string, number>()
  return {
    see(hash: string): number {
      const seen = (map.get(hash) ?? 0) + 1
      map.set(hash, seen)
      if (map.size > max) map.delete(map.keys().next().value!)
      return seen
    },
    entries: () => [...map],
  }
}

const hex14 = fc.stringMatching(/^[0-9a-f]{14}$/)

describe('StateCounts', () => {
  it('counts sightings as the Map it replaced did, forgetting the first seen first, and reads back its own JSON', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(hex14, { minLength: 1, maxLength: 12 }), fc.array(fc.nat(), { maxLength: 300 }), (max, pool, picks) => {
        const states = new StateCounts(max)
        const model = mapModel(max)
        for (const p of picks) {
          const hash = pool[p % pool.length]!
          expect(states.see(hash)).toBe(model.see(hash))
        }
        expect(states.toJSON()).toEqual(model.entries())
        expect(StateCounts.fromJSON(states.toJSON(), max).toJSON()).toEqual(model.entries())
      }),
    )
  })

  it('keeps leading zeros and every digit, and forgets all on clear', () => {
    const states = new StateCounts(200)
    for (const hash of ['00000000000000', '00000001000000', 'ffffffffffffff', '0123456789abcd']) expect(states.see(hash)).toBe(1)
    expect(states.see('ffffffffffffff')).toBe(2)
    expect(states.toJSON()).toEqual([
      ['00000000000000', 1],
      ['00000001000000', 1],
      ['ffffffffffffff', 2],
      ['0123456789abcd', 1],
    ])
    states.clear()
    expect(states.toJSON()).toEqual([])
    expect(states.see('ffffffffffffff')).toBe(1)
  })

  it('holds 200 states in under 4 KB', () => {
    // In a process of its own: a Map of the hash strings held ~18.6 KB at 200.
    const module = fileURLToPath(new URL('../../src/engine/session/state-counts.ts', import.meta.url))
    const perSession = measuredInOwnProcess(`
      import { StateCounts } from ${JSON.stringify(module)}
      const used = () => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers }
      const hash = (n) => n.toString(16).padStart(14, '0')
      const all = new Array(1000)
      gc(); const before = used()
      for (let s = 0; s < all.length; s++) { all[s] = new StateCounts(200); for (let i = 0; i < 300; i++) all[s].see(hash(s * 1000 + i)) }
      gc(); console.log((used() - before) / all.length)`)
    expect(perSession).toBeGreaterThan(2400)
    expect(perSession).toBeLessThan(4096)
  })
})
