import { admitted, rejected } from './step'
import type { Step } from './types'

/**
 * Used units in the window that starts at `windowStart`: the state of the fixed window (an epoch-aligned window)
 * and of the calendar window (a local day or month). A class, not a literal (see `step.ts`).
 *
 * @example
 * const state = new WindowCount(60_000, 3) // 3 used in the window that starts at 60 s
 */
export class WindowCount {
  constructor(
    readonly windowStart: number,
    readonly used: number,
  ) {}
}

/**
 * The counting step of the fixed and the calendar window, which differ only in where their windows start and end:
 * `now` falls in the window [windowStart, windowEnd). Admit iff used + cost <= limit; rejected requests are not
 * counted. Retry-after and reset are both the time to the window's end.
 *
 * @example
 * const windowStart = floorDiv(now, windowMs) * windowMs
 * const step = countWithin(state, windowStart, windowStart + windowMs, now, 1, limit, true)
 */
export function countWithin(
  state: WindowCount | undefined,
  windowStart: number,
  windowEnd: number,
  now: number,
  cost: number,
  limit: number,
  charge: boolean,
): Step<WindowCount> {
  state = asOf(state, windowStart)
  const used = state !== undefined && state.windowStart === windowStart ? state.used : 0
  const toWindowEnd = windowEnd - now
  if (used + cost > limit) return rejected(state, limit - used, toWindowEnd, toWindowEnd)
  if (!charge) return admitted(state, limit - used, toWindowEnd)
  const next = new WindowCount(windowStart, used + cost)
  return admitted(next, limit - next.used, toWindowEnd)
}

/**
 * The refund of {@link countWithin}: only the count of the window holding `now` can go down; an earlier window's is
 * already forgotten.
 *
 * @example
 * const back = refundWithin(state, windowStart, windowStart + windowMs, now, 1, limit)
 */
export function refundWithin(
  state: WindowCount | undefined,
  windowStart: number,
  windowEnd: number,
  now: number,
  cost: number,
  limit: number,
): Step<WindowCount> {
  state = asOf(state, windowStart)
  if (state === undefined || state.windowStart !== windowStart) {
    return countWithin(state, windowStart, windowEnd, now, 1, limit, false)
  }
  const refunded = new WindowCount(windowStart, Math.max(0, state.used - cost))
  return countWithin(refunded, windowStart, windowEnd, now, 1, limit, false)
}

/**
 * Time never runs backwards for a key: when the clock reads a window earlier than the state's (it stepped back), the
 * count moves back to the clock's window. A step then neither forgets the count (which would admit twice the
 * limit) nor keeps the client waiting until the clock is back where it was. The store writes the moved state.
 */
function asOf(state: WindowCount | undefined, windowStart: number): WindowCount | undefined {
  return state !== undefined && state.windowStart > windowStart ? new WindowCount(windowStart, state.used) : state
}
