import { describe, expect, it } from 'vitest'
import { embeddingsUrl, GoalEmbeddings, type EmbedFn } from '../../src/providers/embeddings.js'

/** An EmbedFn that records its inputs; `fail` makes the next calls reject. */
function fake() {
  const calls: string[] = []
  let fail = false
  const embed: EmbedFn = async (inputs) => {
    calls.push(...inputs)
    await new Promise((r) => setTimeout(r, 5))
    if (fail) throw new Error('down')
    return inputs.map((t) => Float64Array.from([t.length, 1]))
  }
  return { embed, calls, setFail: (f: boolean) => void (fail = f) }
}

describe('GoalEmbeddings', () => {
  it('concurrent checks of one goal share one goal request', async () => {
    const f = fake()
    const g = new GoalEmbeddings(f.embed, 1000)
    const outs = await Promise.all(['a', 'bb', 'ccc'].map((t) => g.similarity('goal', t)))
    expect(outs.every((o) => o.kind === 'similarity')).toBe(true)
    expect(f.calls.filter((c) => c === 'goal')).toHaveLength(1)
  })

  it('a failed goal request is not cached: the next check asks again', async () => {
    const f = fake()
    const g = new GoalEmbeddings(f.embed, 1000)
    f.setFail(true)
    expect(await g.similarity('goal', 'x')).toEqual({ kind: 'fallback', reason: 'embeddings failed (down)' })
    f.setFail(false)
    expect((await g.similarity('goal', 'x')).kind).toBe('similarity')
    expect(f.calls.filter((c) => c === 'goal')).toHaveLength(2)
  })

  describe('circuit breaker', () => {
    const OPEN = 'embeddings provider unavailable (circuit open after 3 consecutive failures)'
    /** A GoalEmbeddings over a failing fake, opening after 3 failures for 10 s of a hand-moved clock. */
    function breaking() {
      const f = fake()
      const clock = { now: 1_000_000 }
      const causes: string[] = []
      const g = new GoalEmbeddings(f.embed, 1000, {
        breaker: { failures: 3, cooldownMs: 10_000 },
        clock: () => clock.now,
        onFallback: (c) => void causes.push(c),
      })
      f.setFail(true)
      return { f, g, clock, causes }
    }
    const fail3 = async (g: GoalEmbeddings) => {
      for (let i = 0; i < 3; i++) expect(await g.similarity('goal', `x${i}`)).toEqual({ kind: 'fallback', reason: 'embeddings failed (down)' })
    }

    it('opens after the consecutive failures: the next checks fall back without calling, saying when it retries', async () => {
      const { f, g, clock, causes } = breaking()
      await fail3(g)
      const calls = f.calls.length
      clock.now += 2_500
      expect(await g.similarity('goal', 'y')).toEqual({ kind: 'fallback', reason: `${OPEN}, retrying in 8 s` })
      clock.now += 7_000
      expect(await g.similarity('goal', 'y')).toEqual({ kind: 'fallback', reason: `${OPEN}, retrying in 1 s` })
      expect(f.calls.length).toBe(calls)
      expect(causes).toEqual(['error', 'error', 'error', 'circuit_open', 'circuit_open'])
    })

    it('a success in between resets the count', async () => {
      const { f, g } = breaking()
      await g.similarity('goal', 'a')
      await g.similarity('goal', 'b')
      f.setFail(false)
      expect((await g.similarity('goal', 'c')).kind).toBe('similarity')
      f.setFail(true)
      await g.similarity('goal', 'd')
      await g.similarity('goal', 'e')
      const calls = f.calls.length
      await g.similarity('goal', 'f')
      expect(f.calls.length).toBeGreaterThan(calls)
    })

    it('after the cool-down one trial goes (concurrent checks still fall back); its success closes the circuit', async () => {
      const { f, g, clock } = breaking()
      await fail3(g)
      clock.now += 10_000
      f.setFail(false)
      const before = f.calls.length
      const [trial, other] = await Promise.all([g.similarity('goal', 'trial'), g.similarity('goal', 'other')])
      expect(trial.kind).toBe('similarity')
      expect(other).toEqual({ kind: 'fallback', reason: `${OPEN}, a trial request is under way` })
      expect(f.calls.slice(before)).toEqual(['goal', 'trial'])
      expect((await g.similarity('goal', 'next')).kind).toBe('similarity')
    })

    it('a failed trial re-opens the circuit for another cool-down', async () => {
      const { f, g, clock } = breaking()
      await fail3(g)
      clock.now += 10_000
      expect(await g.similarity('goal', 'trial')).toEqual({ kind: 'fallback', reason: 'embeddings failed (down)' })
      const calls = f.calls.length
      clock.now += 1
      expect(await g.similarity('goal', 'y')).toEqual({ kind: 'fallback', reason: `${OPEN}, retrying in 10 s` })
      clock.now += 10_000
      f.setFail(false)
      expect((await g.similarity('goal', 'y')).kind).toBe('similarity')
      expect(f.calls.length).toBeGreaterThan(calls)
    })

    it('a timeout counts as a failure', async () => {
      const embed: EmbedFn = () => new Promise(() => {})
      const causes: string[] = []
      const g = new GoalEmbeddings(embed, 20, { breaker: { failures: 2, cooldownMs: 10_000 }, onFallback: (c) => void causes.push(c) })
      for (let i = 0; i < 3; i++) await g.similarity('goal', 'x')
      expect(causes).toEqual(['timeout', 'timeout', 'circuit_open'])
    })
  })

  it('accepts a base URL or the full endpoint', () => {
    expect(embeddingsUrl('http://h/v1')).toBe('http://h/v1/embeddings')
    expect(embeddingsUrl('http://h/v1/embeddings/')).toBe('http://h/v1/embeddings')
  })
})
