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
