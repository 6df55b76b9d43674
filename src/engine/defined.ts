/**
 * The entries of `o` whose value is not undefined: spreading a partial override over defaults
 * must not let an absent (`undefined`) field erase a default.
 */
export function defined<T extends object>(o: T | undefined): Partial<T> {
  if (o === undefined) return {}
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
