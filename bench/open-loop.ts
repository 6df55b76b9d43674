/**
 * An open-loop load generator on undici: request i is due at start + i / rate and is sent then,
 * whatever the earlier ones are doing, and its latency counts from its due time. A stalled server
 * thus shows as latency on every request due during the stall (a closed loop of N connections
 * sends nothing while it waits, and records none of that wait: coordinated omission).
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'

export interface OpenLoopRequest {
  method: 'GET' | 'POST' | 'PUT'
  path: string
  headers?: Record<string, string>
  body?: string | Uint8Array
}

export interface OpenLoopOptions {
  baseUrl: string
  /** Requests per second. */
  rate: number
  seconds: number
  /** The i-th request (0-based). */
  request: (i: number) => OpenLoopRequest
  /** Sockets to the server (default 512: more than can ever be in flight below saturation). */
  connections?: number
  /** Requests counted only after this many seconds (default 1: connection set-up and warm-up). */
  warmupSeconds?: number
  /** Each answer's status (0: a transport error), with the request's index. */
  onResponse?: (i: number, status: number) => void
}

export interface OpenLoopResult {
  rate: number
  sent: number
  /** Latencies from each request's due time, ms, sorted; warm-up left out. */
  latencies: Float64Array
  /** Responses by status code; 0 counts transport errors. */
  statuses: Map<number, number>
  /** How far behind schedule the generator itself fell at worst, ms (a sign it, not the server, was the limit). */
  maxLag: number
}

export async function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const pool = new Pool(o.baseUrl, { connections: o.connections ?? 512, pipelining: 1, keepAliveTimeout: 30_000 })
  const total = Math.round(o.rate * o.seconds)
  const warm = Math.round(o.rate * (o.warmupSeconds ?? 1))
  const latencies = new Float64Array(Math.max(0, total - warm))
  const statuses = new Map<number, number>()
  const inflight = new Set<Promise<void>>()
  let maxLag = 0
  const start = performance.now() + 50
  const send = (i: number, due: number) => {
    const r = o.request(i)
    const p = pool
      .request({ method: r.method, path: r.path, headers: { 'content-type': 'application/json', ...r.headers }, ...(r.body === undefined ? {} : { body: r.body }) })
      .then(async (res) => {
        await res.body.dump()
        return res.statusCode
      })
      .catch(() => 0)
      .then((status) => {
        o.onResponse?.(i, status)
        if (i >= warm) latencies[i - warm] = performance.now() - due
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
      })
    inflight.add(p)
    void p.finally(() => inflight.delete(p))
  }
  for (let i = 0; i < total;) {
    const now = performance.now()
    // Everything due by now goes out now, each timed from its own due time.
    while (i < total && start + (i * 1000) / o.rate <= now) {
      const due = start + (i * 1000) / o.rate
      maxLag = Math.max(maxLag, now - due)
      send(i++, due)
    }
    if (i < total) await sleep(Math.max(0, Math.min(5, start + (i * 1000) / o.rate - performance.now())))
  }
  await Promise.all(inflight)
  await pool.close()
  latencies.sort()
  return { rate: o.rate, sent: total, latencies, statuses, maxLag }
}

/** The q-quantile (0–1) of sorted values, nearest rank. */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}

/** "p50 1.2 · p99 4.5 · p99.9 9.8 · max 12.0 ms". */
export function latencyLine(r: OpenLoopResult): string {
  const f = (q: number) => quantile(r.latencies, q).toFixed(1)
  return `p50 ${f(0.5)} · p99 ${f(0.99)} · p99.9 ${f(0.999)} · max ${f(1)} ms`
}
