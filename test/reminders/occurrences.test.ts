import { describe, expect, it } from 'vitest'
import { parseInstant } from '../../src/engine/clock.js'
import { InvalidTrigger, nextOccurrence, occurrences, triggerInstant, validateCron, validateTimezone } from '../../src/reminders/occurrences.js'

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
const t = Date.parse

/**
 * The message of the InvalidTrigger `fn` throws, naming `field` and whether the value is malformed
 * (a 400) or well-formed but unusable (a 422): the maths knows no HTTP status or path.
 */
function refused(field: InvalidTrigger['field'], fn: () => unknown, malformed: boolean): string {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidTrigger)
    expect(err).not.toHaveProperty('status')
    expect((err as InvalidTrigger).field).toBe(field)
    expect((err as InvalidTrigger).malformed).toBe(malformed)
    return (err as InvalidTrigger).message
  }
  throw new Error('expected an InvalidTrigger')
}
const cronRefused = (fn: () => unknown, malformed = true) => refused('cron', fn, malformed)

describe('cron and timezone validation', () => {
  it('accepts standard 5-field expressions and normalises spacing', async () => {
    expect(validateCron('  0  9 * * MON-FRI ')).toBe('0 9 * * MON-FRI')
    expect(validateCron('*/15 * * * *', 'Europe/Paris')).toBe('*/15 * * * *')
  })

  it('rejects malformed expressions with a message that says what is wrong', async () => {
    expect(cronRefused(() => validateCron('61 * * * *'))).toMatch(/minute/)
    expect(cronRefused(() => validateCron('* * * *'))).toMatch(/5 fields|five/)
    expect(cronRefused(() => validateCron('0 0 * * * *'))).toMatch(/5/)
    expect(cronRefused(() => validateCron('hello'))).toMatch(/Invalid cron/)
  })

  it('a wrong field count says how many there are and that exactly 5 are taken, nothing else', async () => {
    for (const [expr, n] of [
      ['* * * *', 4],
      ['0 0 * * * *', 6],
      ['0 0 * * * * *', 7],
      ['hello', 1],
      ['@nightly', 1],
    ] as const) {
      const detail = cronRefused(() => validateCron(expr))
      expect(detail).toContain(`it has ${n} field`)
      expect(detail).toMatch(/exactly 5 fields: minute hour day-of-month month day-of-week\.$/)
      expect(detail).not.toMatch(/six|seven|parts/)
    }
    expect(validateCron('@daily')).toBe('@daily')
  })

  it('rejects an expression that never fires', async () => {
    expect(cronRefused(() => validateCron('0 0 30 2 *'), false)).toMatch(/never fires/)
  })

  it('validates IANA timezones and canonicalises case', async () => {
    expect(validateTimezone('America/New_York')).toBe('America/New_York')
    expect(validateTimezone('utc')).toBe('UTC')
    expect(refused('timezone', () => validateTimezone('Mars/Olympus_Mons'), false)).toMatch(/Unknown timezone 'Mars\/Olympus_Mons'/)
  })

  it('parses only ISO date-times with an offset, and only real dates', async () => {
    expect(triggerInstant('2026-11-22T09:00:00Z')).toBe(t('2026-11-22T09:00:00Z'))
    expect(triggerInstant('2026-11-22T10:00:00+01:00')).toBe(t('2026-11-22T09:00:00Z'))
    expect(parseInstant('2026-11-22T09:00Z')).toBe(t('2026-11-22T09:00:00Z'))
    expect(parseInstant('2028-02-29T09:00:00.123456789z')).toBe(t('2028-02-29T09:00:00.123Z'))
    const bad = [
      '2026-11-22',
      '2026-11-22T09:00:00',
      'tomorrow',
      '2026-13-40T99:00:00Z',
      '2026-02-29T09:00:00Z',
      '2026-04-31T09:00:00Z',
      '2026-11-22T24:00:00Z',
      '2026-11-22T09:00:60Z',
      '2026-11-22 09:00:00Z',
      '2026-11-22T09:00:00+0100',
      '',
    ]
    for (const b of bad) {
      expect(parseInstant(b), b).toBeUndefined()
      refused('at', () => triggerInstant(b), true)
    }
  })
})

describe('occurrences across DST in America/New_York', () => {
  const ny = (cron: string) => ({ type: 'recurring' as const, cron, timezone: 'America/New_York' })

  it('a daily time inside the spring-forward gap fires at the first valid instant after it', async () => {
    const runs = occurrences(ny('30 2 * * *'), t('2026-03-07T12:00:00Z'), 3).map((m) => iso(m))
    // 2026-03-08 02:30 EST does not exist: fires at 03:00 EDT (07:00Z); then 02:30 EDT daily.
    expect(runs).toEqual(['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z', '2026-03-10T06:30:00.000Z'])
  })

  it('a daily time inside the fall-back overlap fires once', async () => {
    const runs = occurrences(ny('30 1 * * *'), t('2026-10-31T12:00:00Z'), 3).map((m) => iso(m))
    expect(runs).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z', '2026-11-03T06:30:00.000Z'])
  })

  it('an hourly schedule keeps a one-hour spacing in UTC through both transitions', async () => {
    const spring = occurrences(ny('0 * * * *'), t('2026-03-08T05:30:00Z'), 4)
    const fall = occurrences(ny('0 * * * *'), t('2026-11-01T04:30:00Z'), 4)
    for (const runs of [spring, fall]) {
      for (let i = 1; i < runs.length; i++) expect((runs[i] as number) - (runs[i - 1] as number)).toBe(3_600_000)
    }
  })

  it('falls back to the given (agent) timezone when the trigger has none', async () => {
    const utc = nextOccurrence({ type: 'recurring', cron: '0 9 * * *' }, t('2026-11-22T00:00:00Z'))
    const paris = nextOccurrence({ type: 'recurring', cron: '0 9 * * *' }, t('2026-11-22T00:00:00Z'), 'Europe/Paris')
    expect(iso(utc)).toBe('2026-11-22T09:00:00.000Z')
    expect(iso(paris)).toBe('2026-11-22T08:00:00.000Z')
  })

  it('nextOccurrence is strictly after, occurrences include `from` itself', async () => {
    const trig = { type: 'recurring' as const, cron: '0 9 * * *' }
    expect(iso(nextOccurrence(trig, t('2026-11-22T09:00:00Z')))).toBe('2026-11-23T09:00:00.000Z')
    expect(iso(occurrences(trig, t('2026-11-22T09:00:00Z'), 1)[0] ?? null)).toBe('2026-11-22T09:00:00.000Z')
  })

  it('scheduled and context triggers', async () => {
    const at = { type: 'scheduled' as const, at: '2026-12-01T10:00:00Z' }
    expect(nextOccurrence(at, t('2026-11-30T00:00:00Z'))).toBe(t('2026-12-01T10:00:00Z'))
    expect(nextOccurrence(at, t('2026-12-02T00:00:00Z'))).toBeNull()
    expect(occurrences(at, t('2026-11-30T00:00:00Z'), 5)).toEqual([t('2026-12-01T10:00:00Z')])
    expect(nextOccurrence({ type: 'context', pattern: 'deploy' }, 0)).toBeNull()
  })
})
