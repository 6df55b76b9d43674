import { useEffect, useState } from 'preact/hooks'

/** Client-side routing under /ui: links are intercepted, the server answers every page with index.html. */
const listeners = new Set<() => void>()

export function navigate(path: string): void {
  if (path === location.pathname + location.search) return
  history.pushState(null, '', path)
  for (const l of listeners) l()
}

addEventListener('popstate', () => {
  for (const l of listeners) l()
})

document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  const a = (event.target as Element | null)?.closest('a')
  if (!a || a.target || a.origin !== location.origin || !a.pathname.startsWith('/ui')) return
  event.preventDefault()
  navigate(a.pathname + a.search)
})

/** The current path and query, re-rendering on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0)
  useEffect(() => {
    const l = () => setTick((n) => n + 1)
    listeners.add(l)
    return () => void listeners.delete(l)
  }, [])
  return { path: location.pathname.replace(/\/+$/, '') || '/ui', query: new URLSearchParams(location.search) }
}
