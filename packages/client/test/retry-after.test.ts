import fc from 'fast-check'
import { parseHttpDate, parseRetryAfter } from '../src/http-date'

const NOW = Date.UTC(1994, 10, 6, 8, 49, 0)
const retryAfter = (value: string, extra: Record<string, string> = {}) =>
  parseRetryAfter(new Headers({ 'retry-after': value, ...extra }), NOW)

describe('Retry-After (RFC 9110 s10.2.3)', () => {
  it('reads delay-seconds', () => {
    expect(retryAfter('120')).toBe(120_000)
    expect(retryAfter('0')).toBe(0)
  })

  it('reads an HTTP-date in all three forms RFC 9110 s5.6.7 requires a recipient to accept', () => {
    expect(retryAfter('Sun, 06 Nov 1994 08:49:37 GMT')).toBe(37_000)
    expect(retryAfter('Sunday, 06-Nov-94 08:49:37 GMT')).toBe(37_000)
    expect(retryAfter('Sun Nov  6 08:49:37 1994')).toBe(37_000)
  })

  it('measures a date from the server’s Date header rather than the local clock', () => {
    // The local clock is 20 s ahead of the server's: the server's own Date keeps the wait at the 37 s it meant.
    const headers = new Headers({
      'retry-after': 'Sun, 06 Nov 1994 08:50:17 GMT',
      date: 'Sun, 06 Nov 1994 08:49:40 GMT',
    })
    expect(parseRetryAfter(headers, NOW + 20_000)).toBe(37_000)
  })

  it('a date in the past means no wait', () => {
    expect(retryAfter('Sun, 06 Nov 1994 08:00:00 GMT')).toBe(0)
  })

  it.each([
    '-5',
    '1.5',
    '1e3',
    '',
    'soon',
    '120 seconds',
    '5, 5',
    'Sun, 31 Feb 1994 08:49:37 GMT',
    '06 Nov 1994 08:49:37',
  ])('ignores the malformed value %j', (value) => {
    expect(retryAfter(value)).toBeUndefined()
  })

  it('is undefined when absent', () => {
    expect(parseRetryAfter(new Headers(), NOW)).toBeUndefined()
  })

  it('places a two-digit RFC 850 year in the past century when it would be more than 50 years ahead', () => {
    const in2026 = Date.UTC(2026, 0, 1)
    expect(new Date(parseHttpDate('Monday, 01-Jan-80 00:00:00 GMT', in2026)!).getUTCFullYear()).toBe(1980)
    expect(new Date(parseHttpDate('Friday, 01-Jan-60 00:00:00 GMT', in2026)!).getUTCFullYear()).toBe(2060)
  })
})

describe('HTTP-date (RFC 9110 s5.6.7) in its three forms', () => {
  const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
  const pad = (n: number, width = 2) => String(n).padStart(width, '0')
  /** The three forms of one instant, written field by field (not by Date, whose output is what we check). */
  function forms(year: number, month: number, day: number, time: string) {
    const weekday = DAYS[new Date(Date.UTC(year, month - 1, Math.min(day, 28))).getUTCDay()]!
    const name = MONTHS[month - 1]
    return {
      imf: `${weekday.slice(0, 3)}, ${pad(day)} ${name} ${pad(year, 4)} ${time} GMT`,
      rfc850: `${weekday}, ${pad(day)}-${name}-${pad(year % 100)} ${time} GMT`,
      asctime: `${weekday.slice(0, 3)} ${name} ${String(day).padStart(2, ' ')} ${time} ${pad(year, 4)}`,
    }
  }
  const NOW_2026 = Date.UTC(2026, 0, 1)

  it('reads every valid instant the same in all three forms', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date(Date.UTC(1977, 0, 1)), max: new Date(Date.UTC(2075, 11, 31)), noInvalidDate: true }),
        (date) => {
          const at = Math.floor(date.getTime() / 1000) * 1000
          const d = new Date(at)
          const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
          const { imf, rfc850, asctime } = forms(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), time)
          expect([imf, rfc850, asctime].map((text) => parseHttpDate(text, NOW_2026))).toEqual([at, at, at])
        },
      ),
      { numRuns: 500, seed: 14 },
    )
  })

  it.each(['imf', 'rfc850', 'asctime'] as const)(
    'in the %s form, rejects 31 Feb with a leap second (a second of 60 skipped the day check)',
    (form) => {
      expect(parseHttpDate(forms(2024, 2, 31, '00:00:60')[form], NOW_2026)).toBeUndefined()
      expect(parseHttpDate(forms(2024, 2, 31, '00:00:59')[form], NOW_2026)).toBeUndefined()
    },
  )

  it.each(['imf', 'rfc850', 'asctime'] as const)(
    'in the %s form, checks the day against the month and year',
    (form) => {
      const parse = (year: number, month: number, day: number) =>
        parseHttpDate(forms(year, month, day, '12:00:00')[form], NOW_2026)
      expect(parse(2024, 2, 29)).toBe(Date.UTC(2024, 1, 29, 12))
      expect(parse(2023, 2, 29)).toBeUndefined()
      expect(parse(2026, 4, 31)).toBeUndefined()
      expect(parse(2026, 12, 31)).toBe(Date.UTC(2026, 11, 31, 12))
      expect(parse(2026, 1, 0)).toBeUndefined()
      expect(parse(2026, 1, 32)).toBeUndefined()
    },
  )

  it('checks the century rule in the four-digit forms: 1900 had no 29 Feb, 2000 had', () => {
    expect(parseHttpDate('Thu, 29 Feb 1900 00:00:00 GMT', NOW_2026)).toBeUndefined()
    expect(parseHttpDate('Tue, 29 Feb 2000 00:00:00 GMT', NOW_2026)).toBe(Date.UTC(2000, 1, 29))
    expect(parseHttpDate('Thu Feb 29 00:00:00 1900', NOW_2026)).toBeUndefined()
  })

  it.each(['imf', 'rfc850', 'asctime'] as const)('in the %s form, reads a leap second as the next second', (form) => {
    expect(parseHttpDate(forms(2016, 12, 31, '23:59:60')[form], Date.UTC(2017, 0, 1))).toBe(Date.UTC(2017, 0, 1))
  })

  it.each(['imf', 'rfc850', 'asctime'] as const)('in the %s form, rejects a time out of range', (form) => {
    for (const time of ['24:00:00', '23:60:00', '23:59:61', '99:99:99']) {
      expect(parseHttpDate(forms(2026, 3, 1, time)[form], NOW_2026)).toBeUndefined()
    }
  })

  it('reads a four-digit year below 100 as that year, not as 19xx', () => {
    expect(new Date(parseHttpDate('Sat, 06 Nov 0094 08:49:37 GMT', NOW_2026)!).getUTCFullYear()).toBe(94)
    expect(new Date(parseHttpDate('Sat Nov  6 08:49:37 0094', NOW_2026)!).getUTCFullYear()).toBe(94)
  })

  it.each([
    ['lower-case GMT', 'Sun, 06 Nov 1994 08:49:37 gmt'],
    ['another zone', 'Sun, 06 Nov 1994 08:49:37 UTC'],
    ['no zone', 'Sun, 06 Nov 1994 08:49:37'],
    ['a one-digit day', 'Sun, 6 Nov 1994 08:49:37 GMT'],
    ['a lower-case month', 'Sun, 06 nov 1994 08:49:37 GMT'],
    ['two spaces', 'Sun,  06 Nov 1994 08:49:37 GMT'],
    ['a tab', 'Sun,\t06 Nov 1994 08:49:37 GMT'],
    ['a five-digit year', 'Sun, 06 Nov 19940 08:49:37 GMT'],
    ['Arabic-Indic digits', 'Sun, ٠٦ Nov 1994 08:49:37 GMT'],
    ['text after the date', 'Sun, 06 Nov 1994 08:49:37 GMT; x'],
    ['an ISO date', '1994-11-06T08:49:37Z'],
    ['a short day name in RFC 850', 'Sun, 06-Nov-94 08:49:37 GMT'],
    ['an asctime day without its space', 'Sun Nov 6 08:49:37 1994'],
    ['100 KB of a date repeated', 'Sun, 06 Nov 1994 08:49:37 GMT '.repeat(3500)],
    ['100 KB of spaces inside', `Sun,${' '.repeat(100_000)}06 Nov 1994 08:49:37 GMT`],
  ])('rejects %s', (_name, text) => {
    expect(parseHttpDate(text, NOW_2026)).toBeUndefined()
  })
})
