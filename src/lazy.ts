/**
 * Modules loaded on first use rather than at start, for the memory a process that never needs
 * them does not pay. `lazy(load)` memoizes the load; a failed one is not kept, so the next call
 * tries again (e.g. after the process ran out of file descriptors).
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = undefined
      throw err
    }))
}

/** undici costs ~10 MB of memory: loaded with the first webhook delivery or provider call. */
export const loadUndici = lazy(() => import('undici'))
