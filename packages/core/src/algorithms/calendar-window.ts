import type { CalendarPeriod } from '../calendar'
import type { Algorithm, AlgorithmParams, Refund } from './types'
import { countWithin, refundWithin, type WindowCount } from './window-count'

/**
 * Used units in the calendar period (a local day or month of the rule's time zone) that starts at `seenAt`, the
 * period of the key's last charge (see {@link WindowCount}).
 *
 * @example
 * const state: CalendarWindowState = new WindowCount(Date.UTC(2025, 2, 29, 23), 1200) // 30 March in Berlin
 */
export type CalendarWindowState = WindowCount

/**
 * Calendar window: a fixed window whose boundaries come from the calendar of the rule's time zone (`period: 'day'`
 * or `'month'`), so a day lasts 23 or 25 hours across a daylight-saving change and a month 28 to 31 days. Admit iff
 * used + cost <= L; rejected requests are not counted. Retry-after and reset are both the time to the period's end.
 * A count from a later period than the clock's (the clock stepped back) moves back to the clock's period.
 * The Redis twin is handed the period boundaries around the instance's clock and picks among them by the Redis
 * clock (`period_at` in calendar.lua), so the same period decides, whichever clock is read.
 * @example
 * const rule = createLimiter({ limit: 500_000, period: 'day', timeZone: 'Europe/Berlin' }).rules[0]
 * const step = calendarWindow(undefined, Date.now(), 1, rule, true) // step.resetMs: to the next Berlin midnight
 */
export const calendarWindow: Algorithm<CalendarWindowState> = (state, now, cost, params, charge) => {
  const { startMs, endMs } = calendarOf(params).at(now)
  return countWithin(state, startMs, endMs, now, cost, params.limit, charge)
}

/**
 * Refund: only the current period's count can go down; a past period is already forgotten.
 *
 * @example
 * const back = calendarWindowRefund(step.state, Date.now(), 1, rule)
 */
export const calendarWindowRefund: Refund<CalendarWindowState> = (state, now, cost, params) => {
  const { startMs, endMs } = calendarOf(params).at(now)
  return refundWithin(state, startMs, endMs, now, cost, params.limit)
}

function calendarOf(params: AlgorithmParams): CalendarPeriod {
  if (params.calendar === undefined) throw new TypeError("sluice: the 'calendar-window' algorithm needs a `period`")
  return params.calendar
}
