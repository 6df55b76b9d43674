import { getHeapStatistics } from 'node:v8'
import underPressure from '@fastify/under-pressure'
import { Semaphore, withTimeout, type SemaphoreInterface } from 'async-mutex'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { unavailable } from '../../errors.js'

/** Past this share of V8's heap limit (`--max-old-space-size`), new requests are turned away. */
const SHED_AT_HEAP_SHARE = 0.85
/** Request bodies of at least this many bytes wait for room in the large-body budget. */
const LARGE_BODY_BYTES = 64 * 1024
/**
 * The default large-body budget as a share of V8's heap limit: 1/48 of a 192 MB heap lets 4
 * bodies of 1 MB be in flight at once. A 1 MB session create peaks at several times its size in
 * heap (the parsed body, its goal terms, the stored row, the answer); 50 of them at once took Node.js
 * 24 past that heap, because the heap sampling below sees a burst only after its bodies are read.
 */
const LARGE_BODY_HEAP_SHARE = 1 / 48

export interface LoadSheddingOptions {
  /** Heap bytes in use past which requests answer 503 (default: SHED_AT_HEAP_SHARE of the heap limit). */
  maxHeapUsedBytes?: number
  /** Bytes of large request bodies (LARGE_BODY_BYTES and over) in flight at once (default: a share of the heap limit). */
  largeBodyBudgetBytes?: number
  /** How long a large request waits for room in that budget before it is answered 503 (default 10 s). */
  largeBodyWaitMs?: number
}

/** The bytes a request's body may bring: its Content-Length, or the route's body limit when it is sent in chunks. */
function declaredBodyBytes(request: FastifyRequest): number {
  const length = Number(request.headers['content-length'])
  if (Number.isFinite(length) && length > 0) return length
  return request.headers['transfer-encoding'] !== undefined ? (request.routeOptions.bodyLimit ?? 0) : 0
}

/**
 * Two guards against running out of memory, each answering 503 problem+json with `Retry-After`
 * instead of letting Node.js abort with every request in flight:
 * - a process near its heap limit turns new requests away before their bodies are read (the heap
 *   in use is sampled once a second, by @fastify/under-pressure);
 * - requests with large bodies wait, before their bodies are read, until the bytes of large bodies
 *   in flight fit a budget, and hold their share until they are answered. A burst of them is
 *   served a few at a time instead of all growing the heap between two heap samples.
 */
export const loadShedding = fp<LoadSheddingOptions>(
  async (app, opts) => {
    const heapLimit = getHeapStatistics().heap_size_limit
    await app.register(underPressure, {
      maxHeapUsedBytes: opts.maxHeapUsedBytes ?? Math.round(heapLimit * SHED_AT_HEAP_SHARE),
      // Rejected, so the error handler renders the 503 as every other problem.
      pressureHandler: () => Promise.reject(unavailable('The server is short of memory; retry shortly.', 2)),
    })

    // Weighed in KiB: the budget is never below one body at the route limit, so every body fits alone.
    const budgetKiB = Math.max(Math.ceil((opts.largeBodyBudgetBytes ?? heapLimit * LARGE_BODY_HEAP_SHARE) / 1024), 1)
    const full = unavailable('The server is busy with other large requests; retry shortly.', 1)
    const largeBodies: SemaphoreInterface = withTimeout(new Semaphore(budgetKiB), opts.largeBodyWaitMs ?? 10_000, full)
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const bytes = declaredBodyBytes(request)
      if (bytes < LARGE_BODY_BYTES) return
      const [, release] = await largeBodies.acquire(Math.min(Math.ceil(bytes / 1024), budgetKiB))
      // 'close' comes once the answer is sent or the connection is gone, whichever ends the request;
      // a client that went away while this request waited has already closed it.
      if (reply.raw.closed) release()
      else reply.raw.once('close', release)
    })
  },
  { name: 'load-shedding', fastify: '5.x', dependencies: ['problem-json'] },
)
