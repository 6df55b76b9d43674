/**
 * How the `enhanced` similarity reads a text before weighing its words: lowercased, a tool call's
 * JSON keys dropped, dates written one way; and the calendar dates it names.
 */
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september',
  'october', 'november', 'december']
const ISO_DATE_RE = /\b(\d{4})-(\d{2})-(\d{2})\b/g
const ORDINAL_RE = /\b(\d+)(?:st|nd|rd|th)\b/g
const DIGIT_RE = /\d/
/** A JSON object key: `"flight_number":` (after lowercasing). */
const JSON_KEY_RE = /"[a-z_][a-z0-9_]*"\s*:/g

/**
 * Lowercases, drops JSON object keys (a tool call's schema, not its content) and writes dates
 * the way people do, so a tool call's `2024-05-20` meets a goal's "May 20th": ISO dates become
 * "2024 may 20", ordinals lose their suffix.
 */
export function normalizeText(text: string): string {
  let lower = text.toLowerCase()
  // Most texts hold neither JSON nor a digit: skip those scans then.
  if (lower.includes('":')) lower = lower.replace(JSON_KEY_RE, ':')
  if (!DIGIT_RE.test(lower)) return lower
  return lower
    .replace(ISO_DATE_RE, (_m, y: string, m: string, d: string) => `${y} ${MONTHS[Number(m) - 1] ?? m} ${Number(d)}`)
    .replace(ORDINAL_RE, '$1')
}

const MONTH_NAMES = MONTHS.join('|')
/** "may 20" and "20 may" in normalized text (ISO dates and ordinals already rewritten). */
const MONTH_DAY_RE = new RegExp(`\\b(?:(${MONTH_NAMES}) (\\d{1,2})|(\\d{1,2}) (${MONTH_NAMES}))\\b`, 'g')

/**
 * The calendar dates (month and day, "may 20") that normalized `text` names, added to `into`.
 * "May" is a general-corpus word of little weight and a day number is one of a handful, so the
 * word cosine hardly sees a date both texts name: the drift check counts it apart.
 */
export function dateMentions(norm: string, into: Set<string> = new Set()): Set<string> {
  if (!DIGIT_RE.test(norm)) return into
  MONTH_DAY_RE.lastIndex = 0
  for (let m = MONTH_DAY_RE.exec(norm); m !== null; m = MONTH_DAY_RE.exec(norm)) {
    into.add(m[1] !== undefined ? `${m[1]} ${Number(m[2])}` : `${m[4]} ${Number(m[3])}`)
  }
  return into
}
