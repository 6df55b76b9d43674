/** A page of a list: `next_cursor` is the last item's key when more rows exist. */
export interface Page<T> {
  items: T[]
  next_cursor: string | null
}

/**
 * Lists query `WHERE key > cursor ORDER BY key LIMIT limit + 1` and hand the rows here: the extra
 * row only tells whether another page exists. The key is the id (ids sort by creation,
 * src/ids.ts) unless `cursorOf` names another (a step number, an event sequence).
 */
export function pageOf<T>(rows: T[], limit: number, cursorOf: (row: T) => string | number = (row) => (row as { id: string }).id): Page<T> {
  if (rows.length <= limit) return { items: rows, next_cursor: null }
  const items = rows.slice(0, limit)
  return { items, next_cursor: String(cursorOf(items[items.length - 1]!)) }
}

/** A list's integer cursor (step number, event sequence) from its decimal string, which NumberCursor (src/schemas.ts) bounded. */
export function intCursor(cursor: string | undefined): number {
  return cursor === undefined ? 0 : Number(cursor)
}
