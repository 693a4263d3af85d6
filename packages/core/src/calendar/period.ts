import { describe, InvalidOptionError } from '../util/errors'
import { floorDiv } from '../util/math'
import { DAY_MS, localClock } from './local-clock'
import { timeZoneOption } from './time-zone'

/**
 * A calendar period a quota counts over: the local day or the local month of the rule's time zone.
 *
 * @example
 * const period: CalendarPeriodName = 'month'
 */
export type CalendarPeriodName = 'day' | 'month'

/**
 * What a quota rule says about its period: `{ period: 'day', timeZone: 'Europe/Berlin' }`.
 *
 * @example
 * const daily: CalendarPeriodOptions = { period: 'day', timeZone: 'America/New_York' }
 */
export interface CalendarPeriodOptions {
  /** `'day'` or `'month'`. */
  period: CalendarPeriodName
  /** An IANA time zone name; default `'UTC'`. */
  timeZone?: string
}

/**
 * One period: `[startMs, endMs)`, integer ms since the epoch.
 *
 * @example
 * const { startMs, endMs } = compileCalendarPeriod({ period: 'day' }).at(Date.now())
 */
export interface PeriodBounds {
  readonly startMs: number
  readonly endMs: number
}

/**
 * A validated calendar period, bound to its time zone once. Every period starts at the first instant the zone's
 * wall clock reaches its first day (00:00 of the day, or of the 1st for a month; where midnight is skipped by a
 * jump forward, the instant of the jump; where the clock is turned back over midnight, the first time it read it,
 * so a period is never reopened) and ends where the next one starts. So a day lasts 23 or 25 hours across a
 * daylight-saving change, a month 28 to 31 days, and a date a zone skipped (Pacific/Apia's 2011-12-30) has none.
 *
 * @example
 * const daily = compileCalendarPeriod({ period: 'day', timeZone: 'Europe/Berlin' })
 * const { startMs, endMs } = daily.at(Date.now()) // today in Berlin
 * daily.policyWindowSeconds                        // 86400, for RateLimit-Policy w
 */
export interface CalendarPeriod {
  readonly period: CalendarPeriodName
  /** The zone as configured. */
  readonly timeZone: string
  /**
   * The policy's nominal window, for `RateLimit-Policy` `w`: 86400 for a day (also on 23- and 25-hour days) and
   * 2592000 (30 days) for a month. The field is meant to stay the same from response to response; the real
   * time left goes in `t` (see {@link CalendarPeriod.msUntilEnd}).
   */
  readonly policyWindowSeconds: number
  /** The period containing `nowMs`. Within one period every call returns the same object, without a lookup. */
  at(nowMs: number): PeriodBounds
  /** Milliseconds from `nowMs` to the end of its period (> 0): `t` and the wait of a quota that ran out. */
  msUntilEnd(nowMs: number): number
  /**
   * Four consecutive period boundaries, ascending: the start of the previous period, the start and the end of
   * the period containing `nowMs`, and the end of the next one. A Redis script picks among them the period that
   * contains the Redis clock (see `periodAt`). The same array for every call within one period.
   */
  boundariesAround(nowMs: number): readonly number[]
}

const PERIODS: readonly CalendarPeriodName[] = ['day', 'month']
const POLICY_WINDOW_SECONDS: { readonly [period in CalendarPeriodName]: number } = { day: 86_400, month: 2_592_000 }

interface Located {
  /** What `at` answers, frozen: it is shared by every caller within the period. */
  readonly bounds: PeriodBounds
  // The same two numbers again, so that the hot path reads one object.
  readonly startMs: number
  readonly endMs: number
  /** The period's first local date, on the wall axis (see local-clock.ts). */
  readonly firstDay: number
  /** The next period's first local date. */
  readonly nextFirstDay: number
  /** Built on first use: a memory store never asks for them. */
  boundaries: readonly number[] | undefined
}

/**
 * Validates `period` and `timeZone` and binds them. `at` is where the options sit, for error messages
 * (`'rules[1]'` names `rules[1].timeZone`). Throws an {@link InvalidOptionError}.
 *
 * @example
 * const monthly = compileCalendarPeriod({ period: 'month', timeZone: 'Asia/Kathmandu' }, 'rules[2]')
 * monthly.at(Date.UTC(2025, 1, 10)) // { startMs: Date.UTC(2025, 0, 31, 18, 15), endMs: Date.UTC(2025, 1, 28, 18, 15) }
 */
export function compileCalendarPeriod(options: CalendarPeriodOptions, at = ''): CalendarPeriod {
  const path = (option: string) => (at ? `${at}.${option}` : option)
  const { period } = options
  if (period === undefined) throw new InvalidOptionError(path('period'), "is required: 'day' or 'month'")
  if (!PERIODS.includes(period)) {
    throw new InvalidOptionError(path('period'), `must be 'day' or 'month' (got ${describe(period)})`)
  }
  const timeZone = timeZoneOption(options.timeZone, path('timeZone'))
  const clock = localClock(timeZone)
  const firstDayOf = period === 'day' ? dayOf : monthOf
  const step = period === 'day' ? stepDays : stepMonths

  /** The first date after (or before, for -1) `firstDay` whose period is not empty, and where that period starts. */
  function neighbour(firstDay: number, boundary: number, direction: 1 | -1): [firstDay: number, startMs: number] {
    for (;;) {
      firstDay = step(firstDay, direction)
      const startMs = clock.firstInstantReaching(firstDay)
      if (direction === 1 ? startMs > boundary : startMs < boundary) return [firstDay, startMs]
    }
  }

  function locate(nowMs: number): Located {
    let firstDay = firstDayOf(clock.wallMs(nowMs))
    let startMs = clock.firstInstantReaching(firstDay)
    for (;;) {
      const [nextDay, endMs] = neighbour(firstDay, startMs, 1)
      // Past the next start only where the clock went back over midnight: it is already the next period.
      if (endMs > nowMs) {
        const bounds = Object.freeze({ startMs, endMs })
        return { bounds, startMs, endMs, firstDay, nextFirstDay: nextDay, boundaries: undefined }
      }
      firstDay = nextDay
      startMs = endMs
    }
  }

  // The current period and the one before it: two callers whose clocks straddle a boundary both stay cached.
  let current: Located = {
    bounds: { startMs: 0, endMs: 0 },
    startMs: Number.POSITIVE_INFINITY,
    endMs: 0,
    firstDay: 0,
    nextFirstDay: 0,
    boundaries: undefined,
  }
  let previous: Located = current
  function lookup(nowMs: number): Located {
    if (nowMs >= current.startMs && nowMs < current.endMs) return current
    if (nowMs >= previous.startMs && nowMs < previous.endMs) return previous
    previous = current
    current = locate(nowMs)
    return current
  }

  return {
    period,
    timeZone,
    policyWindowSeconds: POLICY_WINDOW_SECONDS[period],
    at: function at(nowMs) {
      return lookup(nowMs).bounds
    },
    msUntilEnd: function msUntilEnd(nowMs) {
      return lookup(nowMs).endMs - nowMs
    },
    boundariesAround: function boundariesAround(nowMs) {
      const located = lookup(nowMs)
      if (located.boundaries === undefined) {
        const [, previousStartMs] = neighbour(located.firstDay, located.startMs, -1)
        const [, nextEndMs] = neighbour(located.nextFirstDay, located.endMs, 1)
        located.boundaries = Object.freeze([previousStartMs, located.startMs, located.endMs, nextEndMs])
      }
      return located.boundaries
    },
  }
}

function dayOf(wallMs: number): number {
  return floorDiv(wallMs, DAY_MS) * DAY_MS
}

function monthOf(wallMs: number): number {
  const date = new Date(wallMs)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
}

function stepDays(firstDay: number, days: number): number {
  return firstDay + days * DAY_MS
}

function stepMonths(firstDay: number, months: number): number {
  const date = new Date(firstDay)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1)
}
