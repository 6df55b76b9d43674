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

  it('a tracker past the cap of 200 states holds under 8 KB of heap', () => {
    // In a process of its own: 22 KB when the states were a Map of hash strings.
    const module = fileURLToPath(new URL('../../src/engine/session/goal-tracker.ts', import.meta.url))
    const perTracker = measuredInOwnProcess(`
      import { GoalTracker } from ${JSON.stringify(module)}
      const used = () => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers }
      const all = new Array(500)
      gc(); const before = used()
      for (let s = 0; s < all.length; s++) {
        const t = new GoalTracker('Build a REST API for user management', { keepHistory: false })
        for (let i = 0; i < 300; i++) t.verifyStepSync('step ' + i + ' of ' + s, 'ok')
        all[s] = t
      }
      gc(); console.log((used() - before) / all.length)`)
    expect(perTracker).toBeGreaterThan(2400)
    expect(perTracker).toBeLessThan(8192)
  })
})
