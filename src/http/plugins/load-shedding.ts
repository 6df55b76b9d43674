import { getHeapStatistics } from 'node:v8'
import underPressure from '@fastify/under-pressure'
import fp from 'fastify-plugin'
import { unavailable } from '../../errors.js'

/** Past this share of V8's heap limit (`--max-old-space-size`), new requests are turned away. */
export const SHED_AT_HEAP_SHARE = 0.85

export interface LoadSheddingOptions {
  /** Heap bytes in use past which requests answer 503 (default: SHED_AT_HEAP_SHARE of the heap limit). */
  maxHeapUsedBytes?: number
}

/**
 * A process near its heap limit answers new requests 503 problem+json with `Retry-After`, before
 * their bodies are read, instead of aborting on out-of-memory with every request in flight. The
 * heap in use is sampled once a second (@fastify/under-pressure).
 */
export const loadShedding = fp<LoadSheddingOptions>(
  async (app, opts) => {
    await app.register(underPressure, {
      maxHeapUsedBytes: opts.maxHeapUsedBytes ?? Math.round(getHeapStatistics().heap_size_limit * SHED_AT_HEAP_SHARE),
      // Rejected, so the error handler renders the 503 as every other problem.
      pressureHandler: () => Promise.reject(unavailable('The server is short of memory; retry shortly.', 2)),
    })
  },
  { name: 'load-shedding', fastify: '5.x', dependencies: ['problem-json'] },
)
