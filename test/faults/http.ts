import { expect } from 'vitest'

/** One answer of a real server, with how long it took. */
export interface Answer {
  status: number
  headers: Headers
  body: Record<string, unknown> | null
  ms: number
}

export async function call(base: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now()
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const parsed = (await res.json().catch(() => null)) as Record<string, unknown> | null
  return { status: res.status, headers: res.headers, body: parsed, ms: performance.now() - started }
}

/** A 503 or 507 as the service gives them: problem+json naming the cause, with `Retry-After`. */
export function expectFaultAnswer(a: Answer, status: 503 | 507, types: string[]): void {
  expect(a.status, JSON.stringify(a.body)).toBe(status)
  expect(a.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0)
  expect(types).toContain(a.body?.type)
  expect(a.body?.status).toBe(status)
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `check` until it holds or `ms` pass; resolves to whether it held. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, every = 100): Promise<boolean> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await sleep(every)
  }
}
