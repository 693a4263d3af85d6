/**
 * Retry-After and the HTTP-date format (RFC 9110 s5.6.7 and s10.2.3), parsed strictly: `Date.parse` accepts
 * almost anything, and a wait computed from a misread date is worse than no wait at all.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)'
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)'
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)'
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})'
// The preferred form, then the two obsolete ones that RFC 9110 s5.6.7 says a recipient must still accept.
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`)
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`)
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`)

/**
 * The time in ms since the epoch of an HTTP-date, or `undefined` when the value is not one. `nowMs` is needed only
 * to place the two-digit years of the obsolete RFC 850 form.
 */
export function parseHttpDate(value: string, nowMs: number): number | undefined {
  const text = value.trim()
  let match = IMF_FIXDATE.exec(text)
  if (match) return utc(Number(match[3]), match[2]!, match[1]!, match[4]!, match[5]!, match[6]!)
  match = ASCTIME_DATE.exec(text)
  if (match) return utc(Number(match[6]), match[1]!, match[2]!, match[3]!, match[4]!, match[5]!)
  match = RFC850_DATE.exec(text)
  if (match) {
    // RFC 9110 s5.6.7: a two-digit year more than 50 years in the future is the latest past year with those digits.
    const thisYear = new Date(nowMs).getUTCFullYear()
    let year = Math.floor(thisYear / 100) * 100 + Number(match[3])
    if (year > thisYear + 50) year -= 100
    return utc(year, match[2]!, match[1]!, match[4]!, match[5]!, match[6]!)
  }
  return undefined
}

function utc(year: number, month: string, day: string, hours: string, minutes: string, seconds: string) {
  const monthIndex = MONTHS.indexOf(month)
  const [d, h, m, s] = [Number(day), Number(hours), Number(minutes), Number(seconds)]
  // RFC 9110 allows a leap second (60); nothing else out of range is a time.
  if (h > 23 || m > 59 || s > 60) return undefined
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  const date = new Date(0)
  date.setUTCFullYear(year, monthIndex, d)
  // The day is checked on its own, before the time: 31 Feb rolls over into March, and a date is either a real day
  // or malformed. A leap second then rolls into the next minute, which is when it ends.
  if (date.getUTCMonth() !== monthIndex || date.getUTCDate() !== d) return undefined
  date.setUTCHours(h, m, s)
  return date.getTime()
}

/**
 * What the server's clock read when it sent the response: its `Date` header when valid, otherwise `nowMs`.
 * Measuring an HTTP-date against the server's own clock keeps a skewed local clock from shortening a wait; the
 * `Date` header is truncated to the second, which can only lengthen it.
 */
export function serverNow(headers: Headers, nowMs: number): number {
  const date = headers.get('date')
  const parsed = date === null ? undefined : parseHttpDate(date, nowMs)
  return parsed ?? nowMs
}

const LONGEST_DELAY_SECONDS = 2 ** 31

/**
 * How long `Retry-After` asks to wait, in ms (RFC 9110 s10.2.3: delay-seconds or an HTTP-date), or `undefined`
 * when the field is absent or malformed, so that the caller falls back to its own backoff. A date in the past
 * means no wait.
 */
export function parseRetryAfter(headers: Headers, nowMs: number): number | undefined {
  const value = headers.get('retry-after')
  if (value === null) return undefined
  const text = value.trim()
  // delay-seconds = 1*DIGIT: no sign, no fraction, no exponent. Like a cache reading delta-seconds (RFC 9111
  // s1.2.2), a value past 2^31 s (68 years) is read as 2^31 s: a number too long to hold must not become Infinity.
  if (/^\d+$/.test(text)) return Math.min(Number(text), LONGEST_DELAY_SECONDS) * 1000
  const at = parseHttpDate(text, nowMs)
  if (at === undefined) return undefined
  return Math.max(0, at - serverNow(headers, nowMs))
}
