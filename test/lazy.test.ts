import { expect, it } from 'vitest'
import { lazy } from '../src/lazy.js'

it('lazy loads once, and a failed load is tried again on the next call', async () => {
  let calls = 0
  const load = lazy(async () => {
    calls++
    if (calls === 1) throw new Error('EMFILE')
    return { calls }
  })
  await expect(load()).rejects.toThrow('EMFILE')
  const a = await load()
  const b = await load()
  expect(a).toBe(b)
  expect(calls).toBe(2)
})
