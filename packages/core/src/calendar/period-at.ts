/**
 * The period `periodAt` picked: `[startMs, endMs)`, and `outside` when the time was not within the boundaries
 * given (-1 before the first, 1 at or after the last; 0 within), in which case the nearest period is answered.
 *
 * @example
 * const { startMs, endMs, outside } = periodAt([0, 10, 20], 25) // 10, 20, 1
 */
export interface PeriodAt {
  readonly startMs: number
  readonly endMs: number
  readonly outside: -1 | 0 | 1
}

/**
 * Which of the periods between consecutive `boundaries` (ascending integers, at least two) contains `nowMs`:
 * what a Redis script does with the boundaries an instance sends (`CalendarPeriod.boundariesAround`) and the
 * Redis clock, written here as the Lua is (packages/redis/src/lua/calendar.lua), line for line. A time outside
 * the list means the two clocks disagree by more than a period: the nearest period is answered with `outside`
 * set, so that the caller can log it or refuse, rather than count against a period nobody computed.
 *
 * @example
 * periodAt([0, 86_400_000, 172_800_000], 90_000_000) // { startMs: 86_400_000, endMs: 172_800_000, outside: 0 }
 * periodAt([0, 86_400_000, 172_800_000], -5)         // { startMs: 0, endMs: 86_400_000, outside: -1 }
 */
export function periodAt(boundaries: readonly number[], nowMs: number): PeriodAt {
  const last = boundaries.length - 1
  if (nowMs < (boundaries[0] as number)) {
    return { startMs: boundaries[0] as number, endMs: boundaries[1] as number, outside: -1 }
  }
  if (nowMs >= (boundaries[last] as number)) {
    return { startMs: boundaries[last - 1] as number, endMs: boundaries[last] as number, outside: 1 }
  }
  let i = 0
  while (nowMs >= (boundaries[i + 1] as number)) i++
  return { startMs: boundaries[i] as number, endMs: boundaries[i + 1] as number, outside: 0 }
}
