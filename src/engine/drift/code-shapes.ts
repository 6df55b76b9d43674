/**
 * Identifiers in a text (`PEP4E0`, `mia_li_3668`, `HAT056`, `JFK`) and their shapes, for the
 * `enhanced` similarity's mismatch penalty: when the goal names a reservation `PEP4E0` and the
 * action works on `FQ8APE`, a code of the same shape that the goal doesn't name, the action is
 * likely about something else. A code whose shape the goal never uses says nothing (the goal
 * may simply not know its flight numbers).
 *
 * A code is a run of `[A-Za-z0-9_]` holding a letter and a digit, or of two or more characters
 * all capitals or digits with at least one capital. Its shape maps capitals to `A`, runs of small
 * letters to `a`, digits to `9`, and keeps `_`: `PEP4E0` → `AAA9A9`, `mia_li_3668` → `a_a_9999`.
 */

/** Code (lowercased) → shape, of the codes in `text`. */
export function codeShapes(text: string, into: Map<string, string> = new Map()): Map<string, string> {
  const n = text.length
  for (let i = 0; i < n;) {
    const start = i
    let upper = 0
    let lower = 0
    let digit = 0
    for (; i < n; i++) {
      const c = text.charCodeAt(i)
      if (c >= 65 && c <= 90) upper++
      else if (c >= 97 && c <= 122) lower++
      else if (c >= 48 && c <= 57) digit++
      else if (c !== 95) break
    }
    if (i === start) {
      i++
      continue
    }
    const isCode = digit > 0 ? upper + lower > 0 : upper > 0 && lower === 0 && i - start >= 2
    if (isCode) {
      const word = text.slice(start, i)
      into.set(
        word.toLowerCase(),
        word
          .replace(/[A-Z]/g, 'A')
          .replace(/[a-z]+/g, 'a')
          .replace(/[0-9]/g, '9'),
      )
    }
  }
  return into
}

/**
 * How many distinct codes of `text` are absent from `goalCodes` yet share a shape with one of
 * them (`goalShapes`).
 */
export function mismatchedCodes(text: string, goalCodes: ReadonlyMap<string, string>, goalShapes: ReadonlySet<string>): number {
  if (goalShapes.size === 0) return 0
  const codes = codeShapes(text, scratch)
  let count = 0
  for (const [code, shape] of codes) if (!goalCodes.has(code) && goalShapes.has(shape)) count++
  scratch.clear()
  return count
}

const scratch = new Map<string, string>()
