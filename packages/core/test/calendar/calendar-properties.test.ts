import fc from 'fast-check'
import { type CalendarPeriod, type CalendarPeriodName, compileCalendarPeriod, periodAt } from '../../src/calendar'

const HOUR_MS = 3_600_000
const FROM_MS = Date.UTC(1970, 0, 1)
const TO_MS = Date.UTC(2100, 0, 1)

// Zones with something to get wrong: DST either way of the equator, midnight skipped or reached twice, a skipped
// date, half- and quarter-hour offsets and a half-hour DST, the date line, negative DST (Dublin), Redis's own UTC.
const ZONES = [
  'UTC',
  'Europe/Berlin',
  'Europe/Dublin',
  'America/New_York',
  'America/Sao_Paulo',
  'America/Havana',
  'America/Santiago',
  'America/St_Johns',
  'Asia/Beirut',
  'Africa/Cairo',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Pacific/Apia',
  'Pacific/Kiritimati',
  'Pacific/Kwajalein',
  'Antarctica/Casey',
] as const

const compiled = new Map<string, CalendarPeriod>()
function periodOf(period: CalendarPeriodName, timeZone: string): CalendarPeriod {
  const key = `${period} ${timeZone}`
  let found = compiled.get(key)
  if (found === undefined) {
    found = compileCalendarPeriod({ period, timeZone })
    compiled.set(key, found)
  }
  return found
}

// The oracle reads the wall clock with Intl's formatToParts, another way than the code under test (format()).
const formats = new Map<string, Intl.DateTimeFormat>()
function wallMs(timeZone: string, t: number): number {
  let format = formats.get(timeZone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formats.set(timeZone, format)
  }
  const parts = format.formatToParts(t)
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value)
  return Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'))
}

/** The local date's midnight (day) or its month's first midnight (month) on the wall axis, for a wall reading. */
function firstDayOf(period: CalendarPeriodName, wall: number): number {
  const date = new Date(wall)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), period === 'day' ? date.getUTCDate() : 1)
}

/** The wall clock crosses into a new day (month) at instant `t`: a second before it read an earlier one. */
function startsPeriod(period: CalendarPeriodName, timeZone: string, t: number): boolean {
  const wall = wallMs(timeZone, t)
  return wallMs(timeZone, t - 1000) < firstDayOf(period, wall) && firstDayOf(period, wall) <= wall
}

const instant = fc.integer({ min: FROM_MS, max: TO_MS })
const zone = fc.constantFrom(...ZONES)
const periodName = fc.constantFrom<CalendarPeriodName>('day', 'month')

test('for any instant from 1970 to 2100: start <= now < end, both are local starts of day (of month), and no new date begins in between', () => {
  fc.assert(
    fc.property(
      periodName,
      zone,
      instant,
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (period, timeZone, nowMs, u) => {
        const { startMs, endMs } = periodOf(period, timeZone).at(nowMs)
        expect(startMs).toBeLessThanOrEqual(nowMs)
        expect(nowMs).toBeLessThan(endMs)
        expect(startsPeriod(period, timeZone, startMs)).toBe(true)
        expect(startsPeriod(period, timeZone, endMs)).toBe(true)
        // The end is where the next period starts, and the period's day (month) is never passed before it.
        expect(periodOf(period, timeZone).at(endMs).startMs).toBe(endMs)
        const first = firstDayOf(period, wallMs(timeZone, startMs))
        const inside = startMs + Math.floor(u * (endMs - startMs))
        for (const t of [nowMs, inside, endMs - 1]) {
          expect(firstDayOf(period, wallMs(timeZone, t))).toBeLessThanOrEqual(first)
        }
        if (period === 'month') expect(new Date(first).getUTCDate()).toBe(1)
      },
    ),
    { numRuns: 500 },
  )
})

test('a fresh compiled period answers as a warm one (the cache never changes an answer)', () => {
  fc.assert(
    fc.property(periodName, zone, fc.array(instant, { minLength: 1, maxLength: 6 }), (period, timeZone, times) => {
      const warm = periodOf(period, timeZone)
      const fresh = compileCalendarPeriod({ period, timeZone })
      for (const t of times) {
        expect(fresh.at(t)).toEqual(compileCalendarPeriod({ period, timeZone }).at(t))
        expect(warm.at(t)).toEqual(fresh.at(t))
      }
    }),
    { numRuns: 100 },
  )
})

test('boundariesAround: four ascending boundaries, consecutive periods, the middle one containing now', () => {
  fc.assert(
    fc.property(periodName, zone, instant, (period, timeZone, nowMs) => {
      const calendar = periodOf(period, timeZone)
      const boundaries = calendar.boundariesAround(nowMs)
      const [previousStart, start, end, nextEnd] = boundaries as [number, number, number, number]
      expect(boundaries).toHaveLength(4)
      expect(calendar.at(nowMs)).toEqual({ startMs: start, endMs: end })
      expect(calendar.at(previousStart)).toEqual({ startMs: previousStart, endMs: start })
      expect(calendar.at(end)).toEqual({ startMs: end, endMs: nextEnd })
    }),
    { numRuns: 500 },
  )
})

test('periodAt on the boundaries around the instance clock finds the period of a Redis clock up to 12 h apart', () => {
  fc.assert(
    fc.property(
      periodName,
      zone,
      instant,
      fc.integer({ min: -12 * HOUR_MS, max: 12 * HOUR_MS }),
      (period, timeZone, instanceMs, skewMs) => {
        const calendar = periodOf(period, timeZone)
        const redisMs = instanceMs + skewMs
        expect(periodAt(calendar.boundariesAround(instanceMs), redisMs)).toEqual({
          ...calendar.at(redisMs),
          outside: 0,
        })
      },
    ),
    { numRuns: 500 },
  )
})

describe('periodAt', () => {
  const DAY = [0, 86_400_000, 172_800_000, 259_200_000]

  test.each([
    [0, 0, 86_400_000, 0],
    [86_399_999, 0, 86_400_000, 0],
    [86_400_000, 86_400_000, 172_800_000, 0],
    [259_199_999, 172_800_000, 259_200_000, 0],
    // Outside the list: the nearest period, flagged.
    [-1, 0, 86_400_000, -1],
    [-10 * 86_400_000, 0, 86_400_000, -1],
    [259_200_000, 172_800_000, 259_200_000, 1],
    [1e13, 172_800_000, 259_200_000, 1],
  ])('at %d: [%d, %d), outside %d', (nowMs, startMs, endMs, outside) => {
    expect(periodAt(DAY, nowMs)).toEqual({ startMs, endMs, outside })
  })

  test('two boundaries are one period', () => {
    expect(periodAt([5, 9], 7)).toEqual({ startMs: 5, endMs: 9, outside: 0 })
    expect(periodAt([5, 9], 9)).toEqual({ startMs: 5, endMs: 9, outside: 1 })
  })

  test('for any ascending boundaries and time: the interval that holds it, or the nearest one flagged', () => {
    const boundaries = fc
      .uniqueArray(fc.integer({ min: -1e13, max: 1e13 }), { minLength: 2, maxLength: 8 })
      .map((list) => list.sort((a, b) => a - b))
    fc.assert(
      fc.property(boundaries, fc.integer({ min: -2e13, max: 2e13 }), (list, nowMs) => {
        const { startMs, endMs, outside } = periodAt(list, nowMs)
        const i = list.indexOf(startMs)
        expect(list[i + 1]).toBe(endMs)
        const first = list[0] as number
        const last = list[list.length - 1] as number
        if (nowMs < first) expect([startMs, outside]).toEqual([first, -1])
        else if (nowMs >= last) expect([endMs, outside]).toEqual([last, 1])
        else {
          expect(outside).toBe(0)
          expect(startMs).toBeLessThanOrEqual(nowMs)
          expect(nowMs).toBeLessThan(endMs)
        }
      }),
    )
  })
})
