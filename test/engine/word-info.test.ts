import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { wordRank } from '../../src/engine/similarity/word-info.js'
import { measuredInOwnProcess } from './heap.js'

describe('the rank list', () => {
  it("gives a listed word its line's rank and an unlisted one none", () => {
    expect(wordRank('the')).toBe(0)
    expect(wordRank('of')).toBe(1)
    expect(wordRank('rigel')).toBe(99_999)
    // Neighbours of listed words in the list's order: a prefix, a longer word, past either end.
    for (const word of ['', 'theq', 'rigelx', 'a'.repeat(30), '~', '0000000']) expect(wordRank(word), word).toBeUndefined()
  })

  it('holds its 100,000 words and their n-gram weights in under 4 MB (heap and typed arrays)', () => {
    // A Map of the words held 6.8 MB of heap, a table of every n-gram slot 8 MB and its marks 4 MB.
    const module = fileURLToPath(new URL('../../src/engine/similarity/word-info.ts', import.meta.url))
    const bytes = measuredInOwnProcess(`
      import { wordInfo } from ${JSON.stringify(module)}
      const used = () => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers }
      gc(); const before = used()
      wordInfo('flight')
      gc(); gc(); console.log(used() - before)`)
    expect(bytes).toBeGreaterThan(1_000_000)
    expect(bytes / 2 ** 20).toBeLessThan(4)
  })
})
