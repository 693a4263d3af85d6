// A time zone's wall clock, read through Intl (Node ships full ICU and its tz database), with no dependency.
//
// Wall-clock readings are kept on a "wall axis": the milliseconds Date.UTC gives for the local date and time. A local
// date is then the wall-axis ms of its midnight, and the date's arithmetic (next day, first of next month) is the
// UTC calendar's, which is the same proleptic Gregorian calendar.
import { floorDiv } from '../util/math'

/** One calendar day of wall-clock time. A real day in a zone may be 23, 25 or other numbers of hours. */
export const DAY_MS = 86_400_000
const SECOND_MS = 1000

/**
 * A time zone's wall clock, bound to one cached `Intl.DateTimeFormat` (creating one costs far more than using it).
 *
 * @example
 * const berlin = localClock('Europe/Berlin')
 * berlin.wallMs(Date.UTC(2025, 2, 30, 1)) // Date.UTC(2025, 2, 30, 3): 01:00 UTC is 03:00 CEST
 * berlin.firstInstantReaching(Date.UTC(2025, 2, 30)) // Date.UTC(2025, 2, 29, 23): midnight CET
 */
export interface LocalClock {
  /** The wall clock at instant `t` (ms since the epoch), on the wall axis, to the whole second. */
  wallMs(t: number): number
  /**
   * The first instant at which the wall clock reads `wallMs` or later. Where that reading is skipped (a clock
   * moved forward over it), the instant of the jump; where it happens twice (moved back over it), the first time.
   */
  firstInstantReaching(wallMs: number): number
}

/**
 * Binds a wall clock to a time zone that `Intl.DateTimeFormat` accepts (validate the name first: this throws
 * a RangeError for an unknown one).
 *
 * @example
 * const kolkata = localClock('Asia/Kolkata')
 * kolkata.wallMs(0) // 19_800_000: the epoch was 05:30 in India
 */
export function localClock(timeZone: string): LocalClock {
  // h23: midnight reads 00, never 24 (some engines once wrote "24:00:00" for it, hence the % 24 below as well).
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  })
  // format() costs a fraction of formatToParts() (no part objects), and en-US writes the six numbers in a fixed
  // order ("3/30/2025, 03:00:00"). Checked once here against formatToParts, which stays the way where an engine
  // writes something else.
  const probe = Date.UTC(2001, 1, 3, 4, 5, 6)
  const read = readFormat(format, probe) === readParts(format, probe) ? readFormat : readParts
  const wallMs = (t: number) => read(format, t)

  /** The zone's offset from UTC at `t`: whole seconds, as every offset in the tz database is. */
  function offsetMs(t: number): number {
    const second = floorDiv(t, SECOND_MS) * SECOND_MS
    return wallMs(second) - second
  }

  function firstInstantReaching(target: number): number {
    // The offset in force a day before the target, and the one a day after, each give the one instant that reads
    // the target under that offset, if the offset still holds there. A day either side brackets every instant that
    // can read the target (offsets stay within a day of UTC), and around a midnight a zone changes its offset at
    // most once. Where both instants hold (the clock went back over the target), the earlier one is first.
    const early = target - offsetMs(target - DAY_MS)
    if (wallMs(early) === target) return early
    const late = target - offsetMs(target + DAY_MS)
    if (late !== early && wallMs(late) === target) return late
    // No instant reads `target`: a jump forward skipped it. Find the jump: the first second whose reading is past
    // it. Offsets change on whole seconds, so the search runs on seconds (at most 18 readings over the two days).
    let before = target - DAY_MS // reads earlier than the target, by the same bound as above
    let after = target + DAY_MS // reads later
    while (after - before > SECOND_MS) {
      const middle = before + floorDiv(after - before, 2 * SECOND_MS) * SECOND_MS
      if (wallMs(middle) >= target) after = middle
      else before = middle
    }
    return after
  }

  return { wallMs, firstInstantReaching }
}

const SIX_NUMBERS = /(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)/

/** The wall clock at `t` from en-US `format()`: month, day, year, hour, minute, second (NaN if it is not that). */
function readFormat(format: Intl.DateTimeFormat, t: number): number {
  const match = SIX_NUMBERS.exec(format.format(t))
  if (match === null) return Number.NaN
  const [, month, day, year, hour, minute, second] = match.map(Number) as number[]
  return Date.UTC(year as number, (month as number) - 1, day, (hour as number) % 24, minute, second)
}

/** The wall clock at `t` from `formatToParts()`, whatever order and separators the engine uses. */
function readParts(format: Intl.DateTimeFormat, t: number): number {
  const field: Partial<Record<Intl.DateTimeFormatPartTypes, number>> = {}
  for (const { type, value } of format.formatToParts(t)) field[type] = Number(value)
  const { year = Number.NaN, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = field
  return Date.UTC(year, month - 1, day, hour % 24, minute, second)
}
