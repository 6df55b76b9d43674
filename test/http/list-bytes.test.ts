import { describe, expect, it } from 'vitest'
import { PAGE_BYTES } from '../../src/pagination.js'
import { buildTestApp } from '../helpers.js'

/** A page of sessions (the list) or of digests (the overview). */
type Listed = { items: ({ id: string } | { session: { id: string } })[]; next_cursor: string | null }

/** A plan of 500 steps of 2,000 characters: the largest a session may be, about 1 MB. */
const bigPlan = (k: number) => Array.from({ length: 500 }, (_, i) => `${k} ${i} `.padEnd(2000, 'abcdefghij klmnop '))

describe('a list page reads at most PAGE_BYTES of stored text', () => {
  it('sessions of 1 MB each: the list and the overview page by bytes, in order, nothing lost or repeated', { timeout: 60_000 }, async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const ids: string[] = []
    for (let k = 0; k < 9; k++) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: `goal ${k}`, plan: bigPlan(k) } })
      expect(res.statusCode).toBe(201)
      ids.push(res.json().id)
    }
    for (const [list, order] of [
      ['/v1/sessions', ids],
      ['/v1/sessions/overview', [...ids].reverse()],
    ] as const) {
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const res: { statusCode: number; body: string; json: () => Listed } = await t.app.inject({ url: `${list}${cursor ? `?cursor=${cursor}` : ''}`, headers: a.headers })
        expect(res.statusCode).toBe(200)
        // A page is cut before the row that passes the bound: three of these rows, not the default 50.
        expect(res.body.length).toBeLessThan(PAGE_BYTES * 1.1)
        const page = res.json()
        expect(page.items.length).toBeGreaterThan(0)
        seen.push(...page.items.map((i) => ('session' in i ? i.session.id : i.id)))
        cursor = page.next_cursor
        pages++
      } while (cursor !== null)
      expect([list, seen]).toEqual([list, order])
      expect(pages).toBe(3)
    }
  })

  it('steps of 200,000 characters of output: 20 make a page, and the next page follows', async () => {
    const t = await buildTestApp()
    const a = await t.createAgent()
    const create = await t.app.inject({ method: 'POST', url: '/v1/sessions', headers: a.headers, payload: { goal: 'g' } })
    const id = create.json().id
    // The largest outputs: 21 of them pass 4 MiB.
    for (let i = 0; i < 24; i++) {
      const res = await t.app.inject({ method: 'POST', url: `/v1/sessions/${id}/steps`, headers: a.headers, payload: { description: `step ${i}`, output: 'o'.repeat(200_000) } })
      expect(res.statusCode).toBe(201)
    }
    const first = (await t.app.inject({ url: `/v1/sessions/${id}/steps`, headers: a.headers })).json()
    expect(first.items.length).toBe(20)
    expect(first.next_cursor).toBe('20')
    const rest = (await t.app.inject({ url: `/v1/sessions/${id}/steps?cursor=20`, headers: a.headers })).json()
    expect(rest.items.map((s: { step_number: number }) => s.step_number)).toEqual([21, 22, 23, 24])
    expect(rest.next_cursor).toBeNull()
  })
})
