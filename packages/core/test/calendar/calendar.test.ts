import { InvalidOptionError } from '@sluice/core'
import { type CalendarPeriodOptions, compileCalendarPeriod } from '../../src/calendar'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
const ms = (iso: string) => Date.parse(iso)
const iso = (t: number) => new Date(t).toISOString()

/** The wall clock in `timeZone` at `t`, read with Intl directly: 'YYYY-MM-DD HH:mm:ss'. */
function localTime(timeZone: string, t: number): string {
  const format = new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  })
  return format.format(t)
}

function optionAtFault(options: unknown, at?: string): InvalidOptionError {
  try {
    compileCalendarPeriod(options as CalendarPeriodOptions, at)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return error as InvalidOptionError
  }
  throw new Error('expected compileCalendarPeriod to throw')
}

describe('options', () => {
  test.each<[string, unknown, string, RegExp]>([
    ['a missing period', {}, 'rules[1].period', /is required: 'day' or 'month'/],
    ['period week', { period: 'week' }, 'rules[1].period', /must be 'day' or 'month' \(got "week"\)/],
    ['period 86400', { period: 86_400 }, 'rules[1].period', /must be 'day' or 'month' \(got 86400\)/],
    [
      'an unknown zone',
      { period: 'day', timeZone: 'Mars/Olympus' },
      'rules[1].timeZone',
      /not a time zone this runtime knows \(got "Mars\/Olympus"\): use an IANA name such as 'Europe\/Berlin', 'America\/New_York' or 'UTC'$/,
    ],
    ['an empty zone', { period: 'day', timeZone: '' }, 'rules[1].timeZone', /not a time zone this runtime knows/],
    ['a zone with a space', { period: 'day', timeZone: ' UTC' }, 'rules[1].timeZone', /not a time zone/],
    ['a numeric zone', { period: 'day', timeZone: 2 }, 'rules[1].timeZone', /IANA time zone name.*\(got 2\)/],
    [
      'offset +02:00',
      { period: 'day', timeZone: '+02:00' },
      'rules[1].timeZone',
      /not a UTC offset \(got "\+02:00"\).*'Europe\/Berlin'.*'Etc\/GMT-2' for a fixed UTC\+02:00 \(the Etc sign is inverted\)$/,
    ],
    ['offset -0530', { period: 'month', timeZone: '-0530' }, 'rules[1].timeZone', /not a UTC offset/],
    ['offset UTC+2', { period: 'day', timeZone: 'UTC+2' }, 'rules[1].timeZone', /not a UTC offset/],
    ['offset GMT-03:00', { period: 'day', timeZone: 'GMT-03:00' }, 'rules[1].timeZone', /not a UTC offset/],
  ])('%s is an InvalidOptionError naming the option, with the reason', (_, options, option, reason) => {
    const error = optionAtFault(options, 'rules[1]')
    expect(error.option).toBe(option)
    expect(error.message).toMatch(reason)
  })

  // 'GMT+0' was refused as a UTC offset, while 'Etc/GMT+0' was accepted: both are IANA names of UTC.
  test.each(['GMT+0', 'GMT-0', 'gmt+0', 'Etc/GMT+0'])('the IANA name %s is accepted as UTC', (timeZone) => {
    const daily = compileCalendarPeriod({ period: 'day', timeZone })
    expect(daily.timeZone).toBe(timeZone)
    expect(daily.at(ms('2025-06-15T12:00:00Z')).startMs).toBe(ms('2025-06-15T00:00:00Z'))
  })

  test.each(['GMT+1', 'GMT+00', 'UTC+0'])('the offset %s is still refused: it is not an IANA name', (timeZone) => {
    expect(optionAtFault({ period: 'day', timeZone }).message).toMatch(/not a UTC offset/)
  })

  test('without a path, the option is named alone', () => {
    expect(optionAtFault({ period: 'day', timeZone: 'Nowhere/City' }).option).toBe('timeZone')
  })

  test.each(['UTC', 'utc', 'Etc/UTC', 'europe/berlin', 'Asia/Kolkata', 'Asia/Calcutta', 'Etc/GMT-2', 'US/Eastern'])(
    '%s is accepted, and kept as given',
    (timeZone) => {
      expect(compileCalendarPeriod({ period: 'day', timeZone }).timeZone).toBe(timeZone)
    },
  )

  test('the zone defaults to UTC', () => {
    const daily = compileCalendarPeriod({ period: 'day' })
    expect(daily.timeZone).toBe('UTC')
    expect(daily.at(ms('2025-06-15T12:00:00Z'))).toEqual({
      startMs: ms('2025-06-15T00:00:00Z'),
      endMs: ms('2025-06-16T00:00:00Z'),
    })
  })

  test('the fixed zone Etc/GMT-2 is UTC+02:00 (the Etc sign is inverted)', () => {
    const bounds = compileCalendarPeriod({ period: 'day', timeZone: 'Etc/GMT-2' }).at(ms('2025-06-15T12:00:00Z'))
    expect(iso(bounds.startMs)).toBe('2025-06-14T22:00:00.000Z')
  })
})

interface Case {
  readonly name: string
  readonly options: CalendarPeriodOptions
  readonly at: string
  /** The period containing `at`, as UTC instants. */
  readonly period: readonly [start: string, end: string]
  /** Its length, as the zone's rules give it. */
  readonly lengthMs: number
  /** The local time its first instant reads: midnight, or where midnight was skipped, the time the clock jumped to. */
  readonly startsAt: string
}

// Every expected instant below was checked against the zone's rules in the tz database.
const CASES: readonly Case[] = [
  // Daylight saving time, spring (23 h) and autumn (25 h), in the two zones most users meet.
  {
    name: 'Berlin, spring 2025',
    options: { period: 'day', timeZone: 'Europe/Berlin' },
    at: '2025-03-30T12:00:00Z',
    period: ['2025-03-29T23:00:00Z', '2025-03-30T22:00:00Z'],
    lengthMs: 23 * HOUR_MS,
    startsAt: '00:00',
  },
  {
    name: 'Berlin, autumn 2025',
    options: { period: 'day', timeZone: 'Europe/Berlin' },
    at: '2025-10-26T12:00:00Z',
    period: ['2025-10-25T22:00:00Z', '2025-10-26T23:00:00Z'],
    lengthMs: 25 * HOUR_MS,
    startsAt: '00:00',
  },
  {
    name: 'Berlin, spring 2026',
    options: { period: 'day', timeZone: 'Europe/Berlin' },
    at: '2026-03-29T01:30:00Z',
    period: ['2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z'],
    lengthMs: 23 * HOUR_MS,
    startsAt: '00:00',
  },
  {
    name: 'Berlin, autumn 2026',
    options: { period: 'day', timeZone: 'Europe/Berlin' },
    at: '2026-10-25T00:30:00Z',
    period: ['2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z'],
    lengthMs: 25 * HOUR_MS,
    startsAt: '00:00',
  },
  {
    name: 'Berlin, an ordinary day',
    options: { period: 'day', timeZone: 'Europe/Berlin' },
    at: '2025-07-01T21:59:59Z',
    period: ['2025-06-30T22:00:00Z', '2025-07-01T22:00:00Z'],
    lengthMs: DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'New York, spring 2025',
    options: { period: 'day', timeZone: 'America/New_York' },
    at: '2025-03-09T07:00:00Z',
    period: ['2025-03-09T05:00:00Z', '2025-03-10T04:00:00Z'],
    lengthMs: 23 * HOUR_MS,
    startsAt: '00:00',
  },
  {
    name: 'New York, autumn 2025',
    options: { period: 'day', timeZone: 'America/New_York' },
    at: '2025-11-02T06:00:00Z',
    period: ['2025-11-02T04:00:00Z', '2025-11-03T05:00:00Z'],
    lengthMs: 25 * HOUR_MS,
    startsAt: '00:00',
  },
  {
    name: 'New York, spring 2026',
    options: { period: 'day', timeZone: 'America/New_York' },
    at: '2026-03-08T20:00:00Z',
    period: ['2026-03-08T05:00:00Z', '2026-03-09T04:00:00Z'],
    lengthMs: 23 * HOUR_MS,
    startsAt: '00:00',
  },
  {
    name: 'New York, autumn 2026',
    options: { period: 'day', timeZone: 'America/New_York' },
    at: '2026-11-02T04:59:59Z',
    period: ['2026-11-01T04:00:00Z', '2026-11-02T05:00:00Z'],
    lengthMs: 25 * HOUR_MS,
    startsAt: '00:00',
  },
  // Midnight skipped by a jump forward (00:00 -> 01:00): the day starts at the jump, at 01:00.
  {
    name: 'Havana, 2025-03-09 has no midnight',
    options: { period: 'day', timeZone: 'America/Havana' },
    at: '2025-03-09T12:00:00Z',
    period: ['2025-03-09T05:00:00Z', '2025-03-10T04:00:00Z'],
    lengthMs: 23 * HOUR_MS,
    startsAt: '01:00',
  },
  {
    name: 'Sao Paulo, 2018-11-04 had no midnight',
    options: { period: 'day', timeZone: 'America/Sao_Paulo' },
    at: '2018-11-04T12:00:00Z',
    period: ['2018-11-04T03:00:00Z', '2018-11-05T02:00:00Z'],
    lengthMs: 23 * HOUR_MS,
    startsAt: '01:00',
  },
  {
    name: 'Kiritimati, 1979-10-01 started at 00:40',
    options: { period: 'day', timeZone: 'Pacific/Kiritimati' },
    at: '1979-10-01T12:00:00Z',
    period: ['1979-10-01T10:40:00Z', '1979-10-02T10:00:00Z'],
    lengthMs: 23 * HOUR_MS + 20 * 60_000,
    startsAt: '00:40',
  },
  // Clocks turned back over midnight (00:01 -> 23:01, 02:00 -> 23:00): the day starts the first time it is reached.
  {
    name: "St John's, 2007-11-04 reached midnight twice",
    options: { period: 'day', timeZone: 'America/St_Johns' },
    at: '2007-11-04T03:00:00Z',
    period: ['2007-11-04T02:30:00Z', '2007-11-05T03:30:00Z'],
    lengthMs: 25 * HOUR_MS,
    startsAt: '00:00',
  },
  {
    name: 'Casey, 2010-03-05 went back to the 4th',
    options: { period: 'day', timeZone: 'Antarctica/Casey' },
    at: '2010-03-04T15:30:00Z',
    period: ['2010-03-04T13:00:00Z', '2010-03-05T16:00:00Z'],
    lengthMs: 27 * HOUR_MS,
    startsAt: '00:00',
  },
  // A skipped date: Samoa went from 2011-12-29 straight to 2011-12-31.
  {
    name: 'Apia, the day before the skipped 2011-12-30',
    options: { period: 'day', timeZone: 'Pacific/Apia' },
    at: '2011-12-30T09:59:59.999Z',
    period: ['2011-12-29T10:00:00Z', '2011-12-30T10:00:00Z'],
    lengthMs: DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'Apia, 2011-12-31, the day after',
    options: { period: 'day', timeZone: 'Pacific/Apia' },
    at: '2011-12-30T10:00:00Z',
    period: ['2011-12-30T10:00:00Z', '2011-12-31T10:00:00Z'],
    lengthMs: DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'Apia, December 2011 had 30 days',
    options: { period: 'month', timeZone: 'Pacific/Apia' },
    at: '2011-12-15T00:00:00Z',
    period: ['2011-12-01T10:00:00Z', '2011-12-31T10:00:00Z'],
    lengthMs: 30 * DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'Kiritimati, December 1994 had 30 days',
    options: { period: 'month', timeZone: 'Pacific/Kiritimati' },
    at: '1994-12-30T12:00:00Z',
    period: ['1994-12-01T10:00:00Z', '1994-12-31T10:00:00Z'],
    lengthMs: 30 * DAY_MS,
    startsAt: '00:00',
  },
  // Months of every length, and years.
  {
    name: 'UTC, February 2024 (leap)',
    options: { period: 'month' },
    at: '2024-02-29T23:59:59.999Z',
    period: ['2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z'],
    lengthMs: 29 * DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'UTC, February 2025',
    options: { period: 'month' },
    at: '2025-02-14T00:00:00Z',
    period: ['2025-02-01T00:00:00Z', '2025-03-01T00:00:00Z'],
    lengthMs: 28 * DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'UTC, April 2025',
    options: { period: 'month' },
    at: '2025-04-30T12:00:00Z',
    period: ['2025-04-01T00:00:00Z', '2025-05-01T00:00:00Z'],
    lengthMs: 30 * DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'UTC, January 2025',
    options: { period: 'month' },
    at: '2025-01-01T00:00:00Z',
    period: ['2025-01-01T00:00:00Z', '2025-02-01T00:00:00Z'],
    lengthMs: 31 * DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'UTC, February 2100 (not leap)',
    options: { period: 'month' },
    at: '2100-02-28T12:00:00Z',
    period: ['2100-02-01T00:00:00Z', '2100-03-01T00:00:00Z'],
    lengthMs: 28 * DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'UTC, December 2025 into 2026',
    options: { period: 'month' },
    at: '2025-12-31T23:59:59.999Z',
    period: ['2025-12-01T00:00:00Z', '2026-01-01T00:00:00Z'],
    lengthMs: 31 * DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'UTC, New Year 2026',
    options: { period: 'day' },
    at: '2026-01-01T00:00:00Z',
    period: ['2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'],
    lengthMs: DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'Berlin, New Year 2026',
    options: { period: 'day', timeZone: 'Europe/Berlin' },
    at: '2025-12-31T23:00:00Z',
    period: ['2025-12-31T23:00:00Z', '2026-01-01T23:00:00Z'],
    lengthMs: DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'Berlin, March 2025 (one hour short)',
    options: { period: 'month', timeZone: 'Europe/Berlin' },
    at: '2025-03-15T00:00:00Z',
    period: ['2025-02-28T23:00:00Z', '2025-03-31T22:00:00Z'],
    lengthMs: 31 * DAY_MS - HOUR_MS,
    startsAt: '00:00',
  },
  {
    name: 'New York, November 2025 (one hour long)',
    options: { period: 'month', timeZone: 'America/New_York' },
    at: '2025-11-30T12:00:00Z',
    period: ['2025-11-01T04:00:00Z', '2025-12-01T05:00:00Z'],
    lengthMs: 30 * DAY_MS + HOUR_MS,
    startsAt: '00:00',
  },
  {
    name: 'New York, February 2024 (leap)',
    options: { period: 'month', timeZone: 'America/New_York' },
    at: '2024-03-01T04:59:59.999Z',
    period: ['2024-02-01T05:00:00Z', '2024-03-01T05:00:00Z'],
    lengthMs: 29 * DAY_MS,
    startsAt: '00:00',
  },
  // Offsets of half and three quarters of an hour, and the first zone to see a new day.
  {
    name: 'Kolkata (+05:30)',
    options: { period: 'day', timeZone: 'Asia/Kolkata' },
    at: '2025-06-14T18:30:00Z',
    period: ['2025-06-14T18:30:00Z', '2025-06-15T18:30:00Z'],
    lengthMs: DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'Kathmandu (+05:45), February 2025',
    options: { period: 'month', timeZone: 'Asia/Kathmandu' },
    at: '2025-02-10T00:00:00Z',
    period: ['2025-01-31T18:15:00Z', '2025-02-28T18:15:00Z'],
    lengthMs: 28 * DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'Kiritimati (+14), New Year 2025',
    options: { period: 'day', timeZone: 'Pacific/Kiritimati' },
    at: '2024-12-31T10:00:00Z',
    period: ['2024-12-31T10:00:00Z', '2025-01-01T10:00:00Z'],
    lengthMs: DAY_MS,
    startsAt: '00:00',
  },
  {
    name: 'Lord Howe (half-hour DST), autumn 2025',
    options: { period: 'day', timeZone: 'Australia/Lord_Howe' },
    at: '2025-04-06T00:00:00Z',
    period: ['2025-04-05T13:00:00Z', '2025-04-06T13:30:00Z'],
    lengthMs: DAY_MS + HOUR_MS / 2,
    startsAt: '00:00',
  },
]

describe.each(CASES)('$name', ({ options, at, period: [start, end], lengthMs, startsAt }) => {
  const startMs = ms(start)
  const endMs = ms(end)
  const { timeZone = 'UTC' } = options

  test(`the period containing ${at} is [${start}, ${end})`, () => {
    const period = compileCalendarPeriod(options)
    expect(period.at(ms(at))).toEqual({ startMs, endMs })
    expect(endMs - startMs).toBe(lengthMs)
  })

  test('its first instant belongs to it, and the last ms before it to the previous period', () => {
    const period = compileCalendarPeriod(options)
    expect(period.at(startMs)).toEqual({ startMs, endMs })
    expect(period.at(startMs - 1).endMs).toBe(startMs)
    expect(period.at(endMs - 1)).toEqual({ startMs, endMs })
    expect(period.at(endMs).startMs).toBe(endMs)
  })

  test(`it starts at ${startsAt} local time${options.period === 'month' ? ' on the 1st' : ''}`, () => {
    const local = localTime(timeZone, startMs)
    expect(local.slice(11)).toBe(`${startsAt}:00`)
    if (options.period === 'month') expect(local.slice(8, 10)).toBe('01')
  })

  test('boundariesAround: the previous period, this one and the next, each one where the last ends', () => {
    const period = compileCalendarPeriod(options)
    const boundaries = period.boundariesAround(ms(at))
    expect(boundaries).toHaveLength(4)
    expect(boundaries.slice(1, 3)).toEqual([startMs, endMs])
    expect(period.at(boundaries[0] as number)).toEqual({ startMs: boundaries[0], endMs: startMs })
    expect(period.at(endMs)).toEqual({ startMs: endMs, endMs: boundaries[3] })
  })
})

describe('the cached period', () => {
  test('within one period every call answers the same object; a new period is found when time moves on', () => {
    const daily = compileCalendarPeriod({ period: 'day', timeZone: 'Europe/Berlin' })
    const today = daily.at(ms('2025-03-30T06:00:00Z'))
    expect(daily.at(ms('2025-03-30T21:59:59.999Z'))).toBe(today)
    expect(daily.at(ms('2025-03-29T23:00:00Z'))).toBe(today)
    const tomorrow = daily.at(ms('2025-03-30T22:00:00Z'))
    expect(tomorrow).toEqual({ startMs: ms('2025-03-30T22:00:00Z'), endMs: ms('2025-03-31T22:00:00Z') })
    expect(daily.boundariesAround(ms('2025-03-31T12:00:00Z'))).toBe(daily.boundariesAround(ms('2025-03-31T01:00:00Z')))
  })

  test('time moving backwards, a little or by years, gets the right period', () => {
    const monthly = compileCalendarPeriod({ period: 'month', timeZone: 'America/New_York' })
    const march = { startMs: ms('2025-03-01T05:00:00Z'), endMs: ms('2025-04-01T04:00:00Z') }
    const february = { startMs: ms('2025-02-01T05:00:00Z'), endMs: ms('2025-03-01T05:00:00Z') }
    expect(monthly.at(ms('2025-03-01T05:00:00Z'))).toEqual(march)
    expect(monthly.at(ms('2025-03-01T04:59:59.999Z'))).toEqual(february)
    expect(monthly.at(ms('2025-03-01T05:00:00.001Z'))).toEqual(march)
    expect(monthly.at(ms('1999-12-31T12:00:00Z'))).toEqual({
      startMs: ms('1999-12-01T05:00:00Z'),
      endMs: ms('2000-01-01T05:00:00Z'),
    })
    expect(monthly.at(ms('2025-02-14T00:00:00Z'))).toEqual(february)
  })

  test('two callers whose clocks straddle a boundary keep getting the same object for their period', () => {
    const daily = compileCalendarPeriod({ period: 'day', timeZone: 'Europe/Berlin' })
    const todayStart = ms('2025-03-29T23:00:00Z')
    const behind = daily.at(todayStart)
    const ahead = daily.at(ms('2025-03-30T22:00:00Z'))
    const bounds = daily.boundariesAround(todayStart)
    for (let i = 0; i < 3; i++) {
      expect(daily.at(todayStart)).toBe(behind)
      expect(daily.at(ms('2025-03-30T22:00:00Z'))).toBe(ahead)
    }
    expect(daily.boundariesAround(todayStart)).toBe(bounds)
    expect(behind).toEqual({ startMs: todayStart, endMs: ms('2025-03-30T22:00:00Z') })
  })

  test('two callers whose clocks straddle a boundary each get their own period', () => {
    const daily = compileCalendarPeriod({ period: 'day' })
    const midnight = ms('2025-06-16T00:00:00Z')
    for (let i = 0; i < 10; i++) {
      expect(daily.at(midnight - 1 - i).endMs).toBe(midnight)
      expect(daily.at(midnight + i).startMs).toBe(midnight)
    }
  })
})

describe('what the headers need', () => {
  test('RateLimit-Policy w: 86400 for a day, even a 23- or 25-hour one, and 2592000 (30 days) for a month', () => {
    expect(compileCalendarPeriod({ period: 'day', timeZone: 'Europe/Berlin' }).policyWindowSeconds).toBe(86_400)
    expect(compileCalendarPeriod({ period: 'month', timeZone: 'Asia/Kathmandu' }).policyWindowSeconds).toBe(2_592_000)
  })

  test('msUntilEnd: the time to the next local midnight, by the real length of the day', () => {
    const daily = compileCalendarPeriod({ period: 'day', timeZone: 'Europe/Berlin' })
    // From 01:00 local, before the clocks change, midnight is 22 real hours away on the 23-hour day and 24 on
    // the 25-hour day (23 on the clock either way); from 12:00 local, after the change, 12 hours on both.
    expect(daily.msUntilEnd(ms('2025-03-30T00:00:00Z'))).toBe(22 * HOUR_MS)
    expect(daily.msUntilEnd(ms('2025-10-25T23:00:00Z'))).toBe(24 * HOUR_MS)
    expect(daily.msUntilEnd(ms('2025-03-30T10:00:00Z'))).toBe(12 * HOUR_MS)
    expect(daily.msUntilEnd(ms('2025-10-26T11:00:00Z'))).toBe(12 * HOUR_MS)
    expect(daily.msUntilEnd(ms('2025-10-26T22:59:59.999Z'))).toBe(1)
    expect(daily.msUntilEnd(ms('2025-10-26T23:00:00Z'))).toBe(DAY_MS)
  })
})

// A quota of 500,000 a day met by a steady 10 requests a second from midnight: the count each request sees,
// as a fixed-window count whose window is the calendar period (a period's count starts at 0).
describe('the worked quota: 500,000 a day at 10 requests a second', () => {
  const LIMIT = 500_000
  const INTERVAL_MS = 100

  test.each([
    // On an ordinary day the quota runs out 50,000 s (13 h 53 min 20 s) after midnight, 36,400 s before the next.
    ['UTC', '2025-06-15', '2025-06-15T00:00:00Z', '13:53:20', 36_400],
    ['Europe/Berlin', '2025-06-15', '2025-06-14T22:00:00Z', '13:53:20', 36_400],
    ['America/New_York', '2026-01-20', '2026-01-20T05:00:00Z', '13:53:20', 36_400],
    // The same 50,000 s read an hour later on the clock of the 23-hour day, an hour earlier on the 25-hour day.
    ['Europe/Berlin', '2025-03-30', '2025-03-29T23:00:00Z', '14:53:20', 32_800],
    ['Europe/Berlin', '2025-10-26', '2025-10-25T22:00:00Z', '12:53:20', 40_000],
  ])(
    '%s on %s (midnight at %s): used up at %s local, Retry-After points at the next midnight',
    (timeZone, date, midnight, exhaustedAt, retryAfterSeconds) => {
      const daily = compileCalendarPeriod({ period: 'day', timeZone })
      let periodStart = Number.NaN
      let used = 0
      const consume = (nowMs: number) => {
        const { startMs, endMs } = daily.at(nowMs)
        if (startMs !== periodStart) {
          periodStart = startMs
          used = 0
        }
        if (used + 1 > LIMIT) return { allowed: false, remaining: 0, retryAfterMs: endMs - nowMs }
        used += 1
        return { allowed: true, remaining: LIMIT - used, retryAfterMs: 0 }
      }

      const startMs = ms(midnight)
      expect(localTime(timeZone, startMs)).toBe(`${date} 00:00:00`)
      let nowMs = startMs
      let decision = consume(nowMs)
      expect(decision).toEqual({ allowed: true, remaining: LIMIT - 1, retryAfterMs: 0 })
      while (decision.allowed) {
        nowMs += INTERVAL_MS
        decision = consume(nowMs)
        // The remaining quota, on the way: an hour in, 36,000 used.
        if (nowMs === startMs + HOUR_MS) expect(decision.remaining).toBe(LIMIT - 36_001)
      }
      expect(nowMs - startMs).toBe(50_000_000)
      expect(localTime(timeZone, nowMs)).toBe(`${date} ${exhaustedAt}`)
      expect(decision.retryAfterMs).toBe(retryAfterSeconds * 1000)
      expect(daily.msUntilEnd(nowMs)).toBe(decision.retryAfterMs)
      expect(localTime(timeZone, nowMs + decision.retryAfterMs).slice(11)).toBe('00:00:00')

      // Refused to the last ms of the day; the first request of the next day starts a fresh count.
      const nextMidnight = nowMs + decision.retryAfterMs
      expect(consume(nextMidnight - 1)).toEqual({ allowed: false, remaining: 0, retryAfterMs: 1 })
      expect(consume(nextMidnight)).toEqual({ allowed: true, remaining: LIMIT - 1, retryAfterMs: 0 })
    },
  )
})

describe('an engine whose en-US format() writes the date in another order', () => {
  // The wall clock is read from format() where it writes month/day/year as Node does, and from formatToParts()
  // otherwise. Here format() writes year-month-day, as another engine might.
  const prototype = Intl.DateTimeFormat.prototype
  const original = Object.getOwnPropertyDescriptor(prototype, 'format') as PropertyDescriptor
  afterEach(() => Object.defineProperty(prototype, 'format', original))

  test('periods are still found from the parts, in a zone with daylight saving', () => {
    Object.defineProperty(prototype, 'format', {
      configurable: true,
      get(this: Intl.DateTimeFormat) {
        if (this.resolvedOptions().locale !== 'en-US') return original.get?.call(this)
        return (t?: number | Date) => {
          const field = new Map(this.formatToParts(t).map(({ type, value }) => [type, value]))
          const [y, mo, d, h, mi, s] = ['year', 'month', 'day', 'hour', 'minute', 'second'].map((type) =>
            field.get(type as Intl.DateTimeFormatPartTypes),
          )
          return `${y}-${mo}-${d} ${h}:${mi}:${s}`
        }
      },
    })
    expect(new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', year: 'numeric' }).format(0)).toMatch(/^1970-/)
    const daily = compileCalendarPeriod({ period: 'day', timeZone: 'America/New_York' })
    expect(daily.at(ms('2025-11-02T12:00:00Z'))).toEqual({
      startMs: ms('2025-11-02T04:00:00Z'),
      endMs: ms('2025-11-03T05:00:00Z'),
    })
  })
})
