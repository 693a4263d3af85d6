import type { CalendarPeriod } from '../calendar'
import { admitted, rejected } from './step'
import type { Algorithm, AlgorithmParams, Refund } from './types'

/**
 * Used units in the calendar period (a local day or month of the rule's time zone) that starts at `periodStart`.
 * A class, not a literal (see `step.ts`).
 *
 * @example
 * const state = new CalendarWindowState(Date.UTC(2025, 2, 29, 23), 1200) // 30 March in Berlin
 */
export class CalendarWindowState {
  constructor(
    readonly periodStart: number,
    readonly used: number,
  ) {}
}

/**
 * Calendar window: a fixed window whose boundaries come from the calendar of the rule's time zone (`period: 'day'`
 * or `'month'`), so a day lasts 23 or 25 hours across a daylight-saving change and a month 28 to 31 days. Admit iff
 * used + cost <= L; rejected requests are not counted. Retry-after and reset are both the time to the period's end.
 * The Redis twin is handed the period boundaries around the instance's clock and picks among them by the Redis
 * clock (`period_at` in calendar.lua), so the same period decides, whichever clock is read.
 * @example
 * const rule = createLimiter({ limit: 500_000, period: 'day', timeZone: 'Europe/Berlin' }).rules[0]
 * const step = calendarWindow(undefined, Date.now(), 1, rule, true) // step.resetMs: to the next Berlin midnight
 */
export const calendarWindow: Algorithm<CalendarWindowState> = (state, now, cost, params, charge) => {
  const { startMs: periodStart, endMs: periodEnd } = calendarOf(params).at(now)
  state = asOf(state, periodStart)
  const used = state !== undefined && state.periodStart === periodStart ? state.used : 0
  const toPeriodEnd = periodEnd - now
  const { limit } = params
  if (used + cost > limit) return rejected(state, limit - used, toPeriodEnd, toPeriodEnd)
  if (!charge) return admitted(state, limit - used, toPeriodEnd)
  const next = new CalendarWindowState(periodStart, used + cost)
  return admitted(next, limit - next.used, toPeriodEnd)
}

/**
 * Time never runs backwards for a key: when the clock reads a period earlier than the state's (it stepped back), the
 * count moves back to the clock's period, as in the fixed window. The store writes the moved state.
 */
function asOf(state: CalendarWindowState | undefined, periodStart: number): CalendarWindowState | undefined {
  return state !== undefined && state.periodStart > periodStart
    ? new CalendarWindowState(periodStart, state.used)
    : state
}

/**
 * Refund: only the current period's count can go down; a past period is already forgotten.
 *
 * @example
 * const back = calendarWindowRefund(step.state, Date.now(), 1, rule)
 */
export const calendarWindowRefund: Refund<CalendarWindowState> = (state, now, cost, params) => {
  const { startMs: periodStart } = calendarOf(params).at(now)
  state = asOf(state, periodStart)
  if (state === undefined || state.periodStart !== periodStart) return calendarWindow(state, now, 1, params, false)
  return calendarWindow(new CalendarWindowState(periodStart, Math.max(0, state.used - cost)), now, 1, params, false)
}

function calendarOf(params: AlgorithmParams): CalendarPeriod {
  if (params.calendar === undefined) throw new TypeError("sluice: the 'calendar-window' algorithm needs a `period`")
  return params.calendar
}
