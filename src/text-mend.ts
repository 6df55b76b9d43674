/**
 * Text both databases store alike: PostgreSQL's text cannot hold NUL, and half a surrogate pair is
 * no UTF-8. What an agent's tool printed or was called with is recorded as it came, mended: each
 * U+0000 and lone surrogate becomes U+FFFD.
 */
export function mendString(text: string): string {
  return (text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text).toWellFormed()
}

/** `value` with every string in it (keys too) mended; the caller bounds its depth. */
export function mendText(value: unknown): unknown {
  if (typeof value === 'string') return mendString(value)
  if (Array.isArray(value)) return value.map(mendText)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [mendString(k), mendText(v)]))
}
