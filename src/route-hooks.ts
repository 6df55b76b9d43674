/** A route's hook option as a list: plugins put their hooks before the route's own (`onRoute`). */
export function asArray<T>(hook: T | T[] | undefined): T[] {
  return hook === undefined ? [] : Array.isArray(hook) ? hook : [hook]
}
