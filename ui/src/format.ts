/** Small display helpers shared by the pages. */

export const pct = (x: number): string => `${Math.round(x * 100)}%`
export const num = (x: number, digits = 2): string => x.toFixed(digits)

/** A timestamp as local date and time, without seconds' noise. */
const dateTime = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
export function when(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—'
}

/** "in 5 min", "3 h ago". */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return ''
  const s = Math.round((new Date(iso).getTime() - now) / 1000)
  const abs = Math.abs(s)
  const [n, unit] = abs < 60 ? [abs, 's'] : abs < 3600 ? [Math.round(abs / 60), 'min'] : abs < 86400 ? [Math.round(abs / 3600), 'h'] : [Math.round(abs / 86400), 'd']
  return s >= 0 ? `in ${n} ${unit}` : `${n} ${unit} ago`
}

/** At most `max` characters, the last an ellipsis when cut; never half of a surrogate pair (an emoji). */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text
  const end = max - 1
  const last = text.charCodeAt(end - 1)
  return `${text.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end)}…`
}

/** Severity colours, shared by the chart, the sparkline and the CSS classes `sev-*`. */
export const SEVERITY_COLOURS: Record<string, string> = {
  none: '#2e7d32',
  low: '#9e9d24',
  moderate: '#f9a825',
  high: '#ef6c00',
  critical: '#c62828',
}
