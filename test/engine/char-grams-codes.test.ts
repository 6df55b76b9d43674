import { describe, expect, it } from 'vitest'
import { firstSeen, GramTable, gramSlots, gramWeight, newPass } from '../../src/engine/similarity/char-grams.js'
import { codeShapes, mismatchedCodes } from '../../src/engine/drift/code-shapes.js'
import { CODE_MISMATCH_PENALTY, DATE_MATCH_BONUS, goalBag, similarityToText, UNLISTED_MATCH_BONUS, wordWeight } from '../../src/engine/similarity/enhanced-similarity.js'
import { dateMentions, normalizeText } from '../../src/engine/similarity/text-normalize.js'

describe('character n-grams', () => {
  it('hashes the 3–5-grams of <word> to distinct slots, the same every time', () => {
    // "<cat>" has 3 + 2 + 1 = 6 n-grams of 3–5 characters.
    expect(gramSlots('cat')).toHaveLength(6)
    expect([...gramSlots('upgrade')]).toEqual([...gramSlots('upgrade')])
  })

  it('weighs an n-gram of common words less than one of a rare word', () => {
    wordWeight('flight') // loads the list and the n-gram table
    const weight = (word: string) => Math.max(...[...gramSlots(word)].map(gramWeight))
    expect(weight('the')).toBeLessThan(weight('pgloader'))
    expect(gramWeight(gramSlots('the')[0]!)).toBeGreaterThanOrEqual(0)
  })

  it('GramTable finds every slot it holds and 0 for others', () => {
    const grams = new Map([...gramSlots('replica')].map((s, i) => [s, i + 1] as const))
    const table = new GramTable(grams)
    for (const [s, w] of grams) expect(table.get(s)).toBe(w)
    expect(table.get(12345)).toBe(grams.get(12345) ?? 0)
    expect(table.norm2).toBeCloseTo(
      [...grams.values()].reduce((a, w) => a + w * w, 0),
      12,
    )
  })

  it('tells the first sighting of a slot in a text from a repeat, in texts of any length and after 65,535 texts', () => {
    // 5,000 distinct slots, each seen twice: the seen set grows past its first size, keeping what it saw.
    newPass()
    const slots = Array.from({ length: 5000 }, (_, i) => i * 7919)
    expect(slots.map(firstSeen).every(Boolean)).toBe(true)
    expect(slots.some(firstSeen)).toBe(false)
    // A new text forgets them all; 65,535 texts later the pass number is the same again, and still.
    let wrong = 0
    for (let i = 0; i < 0xffff; i++) {
      newPass()
      if (!firstSeen(42) || firstSeen(42)) wrong++
    }
    expect(wrong).toBe(0)
    expect(slots.map(firstSeen).every(Boolean)).toBe(true)
  })

  it('lets parts of words meet: a partial match scores above no match', () => {
    const goal = goalBag('Upgrade the reservation to business class')
    expect(similarityToText(goal, 'upgrading', 0.5)).toBeGreaterThan(similarityToText(goal, 'weather', 0.5))
  })
})

describe('code shapes', () => {
  it('finds codes with a digit, or all capitals, and their shapes', () => {
    const codes = codeShapes('Rebook PEP4E0 for mia_li_3668 from JFK on HAT056, not a Word or I')
    expect([...codes]).toEqual([
      ['pep4e0', 'AAA9A9'],
      ['mia_li_3668', 'a_a_9999'],
      ['jfk', 'AAA'],
      ['hat056', 'AAA999'],
    ])
  })

  it('counts codes of a shape the goal uses that the goal does not name', () => {
    const goal = codeShapes('Cancel reservation PEP4E0 from JFK')
    const shapes = new Set(goal.values())
    expect(mismatchedCodes('get_reservation_details({"reservation_id": "PEP4E0"})', goal, shapes)).toBe(0)
    expect(mismatchedCodes('get_reservation_details({"reservation_id": "XKQ7T2"})', goal, shapes)).toBe(1)
    expect(mismatchedCodes('Flight HAT056 from EWR', goal, shapes)).toBe(1) // EWR; HAT056's shape the goal lacks
    expect(mismatchedCodes('Reservation FQ8APE', goal, shapes)).toBe(0) // AA9AAA: another shape
    expect(mismatchedCodes('anything FQ8APE', new Map(), new Set())).toBe(0)
  })

  it('lowers the drift score of an action on another reservation', () => {
    const goal = goalBag('Cancel reservation PEP4E0, the flight from JFK')
    const same = similarityToText(goal, 'get_reservation_details({"reservation_id": "PEP4E0"})', 0.5)
    const other = similarityToText(goal, 'get_reservation_details({"reservation_id": "XKQ7T2"})', 0.5)
    expect(other).toBeLessThan(same)
  })
})

describe('unlisted words', () => {
  it('adds the bonus once when the action names a word of the goal missing from the rank list', () => {
    const goal = goalBag('Cancel reservation PEP4E0 and rebook 3 bags for mia_li_3668')
    expect([...goal.unlisted].sort()).toEqual(['3', '3668', 'pep4e0'])
    const plain = { ...goal, unlisted: new Set<string>() }
    const shift = (action: string) => similarityToText(goal, action, 0.5) - similarityToText(plain, action, 0.5)
    expect(shift('get_reservation_details({"reservation_id": "PEP4E0"})')).toBeCloseTo(UNLISTED_MATCH_BONUS, 10)
    // Once, however many: PEP4E0, 3 and 3668 together.
    expect(shift('Reservation PEP4E0 of mia_li_3668 now has 3 bags')).toBeCloseTo(UNLISTED_MATCH_BONUS, 10)
    // Listed words ("cancel", "reservation") or another code add nothing.
    expect(shift('cancel_reservation({"reservation_id": "XKQ7T2"})')).toBe(0)
  })
})

describe('dates', () => {
  const dates = (text: string) => [...dateMentions(normalizeText(text))]

  it('finds month-day dates in normalized text, whichever way they are written', () => {
    expect(dates('Fly on May 20th, back 2024-05-24 or 3 June')).toEqual(['may 20', 'may 24', 'june 3'])
    expect(dates('Jun 3, Sept 5, Dec. 25 and the 20th of March')).toEqual(['june 3', 'september 5', 'december 25', 'march 20'])
    expect(dates('created 2024-05-20T10:00:00, due May  21, 2024')).toEqual(['may 20', 'may 21'])
    // "may" the verb before a number reads as a date: the one ambiguity kept.
    expect(dates('You may 2 choose; in May 2024')).toEqual(['may 2'])
  })

  it('takes no day outside 1-31 and no decimal for a date', () => {
    expect(dates('No date here, 99 may, may 00, 12.5 may, may 20.5 or 2024-05-201')).toEqual([])
  })

  it('adds the bonus for a date the goal names and the code penalty per other date, at most 3', () => {
    const goal = goalBag('Move the Seattle flight to May 24')
    const undated = { ...goal, dates: new Set<string>() }
    const shift = (action: string) => similarityToText(goal, action, 0.5) - similarityToText(undated, action, 0.5)
    const search = (...days: number[]) => `search_direct_flight({"destination": "SEA", "dates": [${days.map((d) => `"2024-05-${d}"`).join(', ')}]})`
    expect(shift(search(24))).toBeCloseTo(DATE_MATCH_BONUS, 10)
    expect(shift(search(24, 27))).toBeCloseTo(DATE_MATCH_BONUS - CODE_MISMATCH_PENALTY, 10)
    expect(shift(search(27))).toBeCloseTo(-CODE_MISMATCH_PENALTY, 10)
    expect(shift(search(11, 12, 13, 14, 15))).toBeCloseTo(-3 * CODE_MISMATCH_PENALTY, 10)
    expect(shift('search_direct_flight({"destination": "SEA"})')).toBe(0)
    // An undated goal has no dates to hold an action's against; the sum is kept within [0, 1].
    expect(goalBag('Move the Seattle flight').dates.size).toBe(0)
    expect(similarityToText(goalBag('May 24 flight'), 'May 24 flight', 0.5)).toBe(1)
  })
})
