import { useCallback, useEffect, useState } from 'preact/hooks'

export interface Loaded<T> {
  data: T | undefined
  error: string | undefined
  reload: () => void
}

/** Runs `load` when `deps` change (and on `reload`); a late answer for old deps is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let current = true
    load().then(
      (d) => {
        if (!current) return
        setData(d)
        setError(undefined)
      },
      (err: Error) => current && setError(err.message),
    )
    return () => {
      current = false
    }
    // The caller names the deps (load is a new closure on every render).
  }, [...deps, tick])
  return { data, error, reload: useCallback(() => setTick((n) => n + 1), []) }
}

/** Calls `fn` every `ms` while the tab is visible. */
export function useInterval(fn: () => void, ms: number, active = true): void {
  useEffect(() => {
    if (!active) return
    const id = setInterval(() => {
      if (document.visibilityState === 'visible') fn()
    }, ms)
    return () => clearInterval(id)
  }, [fn, ms, active])
}
