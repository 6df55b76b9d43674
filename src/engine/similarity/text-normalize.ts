/**
 * How the `enhanced` similarity reads a text before weighing its words: lowercased, a tool call's
 * JSON keys dropped, dates written one way; and the calendar dates it names.
 */
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
/** An ISO date, alone or opening a datetime (`2024-05-20T10:00`, whose `T` it takes too). */
const ISO_DATE_RE = /\b(\d{4})-(\d{2})-(\d{2})(t(?=\d)|(?!\d))/g
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
  return lower.replace(ISO_DATE_RE, (_m, y: string, m: string, d: string, t: string) => `${y} ${MONTHS[Number(m) - 1] ?? m} ${Number(d)}${t === '' ? '' : ' '}`).replace(ORDINAL_RE, '$1')
}

/** A month's name or its usual abbreviation ("sept", "dec."); its first three letters name it. */
const MONTH_WORD = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)'
const MONTH_BY_PREFIX = new Map(MONTHS.map((m) => [m.slice(0, 3), m]))
/**
 * "may 20", "may 20, 2024", "20 may", "20 of may" in normalized text (ISO dates and ordinals
 * already rewritten); not "12.5 may" or "may 20.5".
 */
const MONTH_DAY_RE = new RegExp(`\\b(?:${MONTH_WORD}\\.?\\s+(\\d{1,2})(?![.,]?\\d)|(?<![\\d.])(\\d{1,2})\\s+(?:of\\s+)?${MONTH_WORD})\\b`, 'g')

/**
 * The calendar dates (month and day, "may 20") that normalized `text` names, added to `into`.
 * "May" is a general-corpus word of little weight and a day number is one of a handful, so the
 * word cosine hardly sees a date both texts name: the drift check counts it apart.
 */
export function dateMentions(norm: string, into: Set<string> = new Set()): Set<string> {
  if (!DIGIT_RE.test(norm)) return into
  MONTH_DAY_RE.lastIndex = 0
  for (let m = MONTH_DAY_RE.exec(norm); m !== null; m = MONTH_DAY_RE.exec(norm)) {
    const [month, day] = m[1] !== undefined ? [m[1], Number(m[2])] : [m[4]!, Number(m[3])]
    if (day >= 1 && day <= 31) into.add(`${MONTH_BY_PREFIX.get(month.slice(0, 3))} ${day}`)
  }
  return into
}
