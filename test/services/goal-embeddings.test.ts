import { describe, expect, it } from 'vitest'
import { embeddingsUrl, GoalEmbeddings, type EmbedFn } from '../../src/services/embeddings.js'

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

  it('accepts a base URL or the full endpoint', () => {
    expect(embeddingsUrl('http://h/v1')).toBe('http://h/v1/embeddings')
    expect(embeddingsUrl('http://h/v1/embeddings/')).toBe('http://h/v1/embeddings')
  })
})
