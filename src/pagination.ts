/** A page of a list: `next_cursor` is the last item's id when more rows exist. */
export interface Page<T> {
  items: T[]
  next_cursor: string | null
}

/**
 * Ids sort by creation (src/ids.ts), so a cursor is simply the last id seen. Services query
 * `WHERE id > cursor ORDER BY id LIMIT limit + 1` and hand the rows here: the extra row only
 * tells whether another page exists.
 */
export function pageOf<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  if (rows.length <= limit) return { items: rows, next_cursor: null }
  const items = rows.slice(0, limit)
  return { items, next_cursor: items[items.length - 1]!.id }
}
