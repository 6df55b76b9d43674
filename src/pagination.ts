/** A page of a list: `next_cursor` is the last item's key when more rows exist. */
export interface Page<T> {
  items: T[]
  next_cursor: string | null
}

/**
 * The most bytes of stored text one page of a list whose rows can be large (sessions, steps)
 * reads: 50 sessions with 1 MB plans made a 51 MB page, and a few at once took the process past
 * its heap. A page ends early rather than pass it (never empty: a row larger alone is a page).
 */
export const PAGE_BYTES = 4 * 1024 * 1024

/**
 * A list query (`SELECT <columns> <from> ORDER BY <order> LIMIT ?`, `from` holding the WHERE)
 * whose rows carry `page_bytes`, the running total of the `sized` columns' bytes through the row,
 * and stop two rows past PAGE_BYTES: the row that passes it, and one more to say that more follow
 * even when that row is the first. The database reads the rest; they never reach the process.
 */
export function byteBoundedList(columns: string, from: string, order: string, sized: readonly string[]): string {
  const bytes = sized.map((c) => `coalesce(octet_length(${c}), 0)`).join(' + ')
  return `SELECT * FROM (
      SELECT ${columns}, SUM(${bytes}) OVER (ORDER BY ${order} ROWS UNBOUNDED PRECEDING) AS page_bytes,
        coalesce(SUM(${bytes}) OVER (ORDER BY ${order} ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING), 0) AS bytes_before_last
      ${from} ORDER BY ${order} LIMIT ?
    ) page WHERE bytes_before_last <= ${PAGE_BYTES} ORDER BY ${order}`
}

/**
 * Lists query `WHERE key > cursor ORDER BY key LIMIT limit + 1` and hand the rows here: the extra
 * row only tells whether another page exists. The key is the id (ids sort by creation,
 * src/ids.ts) unless `cursorOf` names another (a step number, an event sequence). Rows read by
 * byteBoundedList end the page before the first one past PAGE_BYTES (the first row excepted).
 */
export function pageOf<T>(rows: T[], limit: number, cursorOf: (row: T) => string | number = (row) => (row as { id: string }).id): Page<T> {
  const over = rows.findIndex((row, i) => i > 0 && Number((row as { page_bytes?: unknown }).page_bytes) > PAGE_BYTES)
  const end = over === -1 ? limit : Math.min(limit, over)
  if (rows.length <= end) return { items: rows, next_cursor: null }
  const items = rows.slice(0, end)
  return { items, next_cursor: String(cursorOf(items[items.length - 1]!)) }
}

/** A list's integer cursor (step number, event sequence) from its decimal string, which NumberCursor (src/schemas.ts) bounded. */
export function intCursor(cursor: string | undefined): number {
  return cursor === undefined ? 0 : Number(cursor)
}
