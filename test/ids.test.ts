import { describe, expect, it } from 'vitest'
import { newId } from '../src/ids.js'

const SHAPE = /^ses_[0-9a-z]{9}[A-Za-z0-9_-]{16}$/

describe('newId', () => {
  it('has the documented shape: prefix, 9 base36 time characters, 16 url-safe characters', () => {
    expect(newId('ses')).toMatch(SHAPE)
    expect(newId('ses', 0).slice(4, 13)).toBe('000000000')
  })

  it('sorts ids made within one millisecond in the order they were made', () => {
    const ids = Array.from({ length: 5000 }, () => newId('ses', 1_790_000_000_000))
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
    for (const id of ids) expect(id).toMatch(SHAPE)
  })

  it('sorts by time across milliseconds and starts each millisecond at a random suffix', () => {
    const ids = [1, 2, 3, 4].map((ms) => newId('rem', 1_790_000_000_000 + ms))
    expect([...ids].sort()).toEqual(ids)
    // A fresh millisecond draws a new suffix rather than continuing the previous one's count.
    const suffixes = new Set([1, 2, 3, 4].map((ms) => newId('rem', 1_790_000_001_000 + ms).slice(13)))
    expect(suffixes.size).toBe(4)
  })
})
