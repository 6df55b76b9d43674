/**
 * The page's own /v1 calls: the API key from sessionStorage (this tab only) as a Bearer header.
 * No cookies are sent or set (`credentials: 'omit'`), so there is no CSRF surface.
 */
const KEY = 'goalkeeper.api_key'

export const apiKey = (): string | null => sessionStorage.getItem(KEY)
export const saveKey = (key: string): void => sessionStorage.setItem(KEY, key)
export const forgetKey = (): void => sessionStorage.removeItem(KEY)

/** A problem+json answer, or a failed request (status 0). */
export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

let onUnauthorized: (message: string) => void = () => {}
/** Called when the server refuses the key (401): the app signs out and says why. */
export const whenUnauthorized = (fn: (message: string) => void): void => {
  onUnauthorized = fn
}

export async function api<T>(path: string, init: { method?: string; body?: unknown; key?: string } = {}): Promise<T> {
  const key = init.key ?? apiKey() ?? ''
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' }
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(`/v1${path}`, {
      method: init.method ?? 'GET',
      headers,
      body: init.body === undefined ? null : JSON.stringify(init.body),
      credentials: 'omit',
      cache: 'no-store',
    })
  } catch (err) {
    throw new ApiError(0, `The server could not be reached (${(err as Error).message}).`)
  }
  if (res.status === 204) return undefined as T
  const data = (await res.json().catch(() => null)) as (T & { detail?: string }) | null
  if (!res.ok) {
    const message = data?.detail ?? `${res.status} ${res.statusText}`
    if (res.status === 401 && init.key === undefined) onUnauthorized(message)
    throw new ApiError(res.status, message)
  }
  return data as T
}

/** Every page of a list, following next_cursor (the session page's step log). */
export async function allPages<T>(path: string, after?: string): Promise<{ items: T[]; last: string | undefined }> {
  const items: T[] = []
  let cursor = after
  for (;;) {
    const sep = path.includes('?') ? '&' : '?'
    const page = await api<{ items: T[]; next_cursor: string | null }>(`${path}${sep}limit=200${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)
    items.push(...page.items)
    if (page.next_cursor === null) return { items, last: cursor }
    cursor = page.next_cursor
  }
}
