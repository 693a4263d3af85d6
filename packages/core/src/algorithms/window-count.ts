import { admitted, rejected } from './step'
import type { Step } from './types'

/**
 * `used` units counted in the window that starts at `seenAt` (the key's last instant as `keyTime` reads it): the state of the
 * fixed window (an epoch-aligned window) and of the calendar window (a local day or month). `offsetMs`: how far the
 * key's time was ahead of the clock when it was written (0 unless the clock stepped back; see `keyTime`; always 0 for
 * a calendar window). A class, not a literal (see `step.ts`).
 *
 * @example
 * const state = new WindowCount(60_000, 3) // 3 used in the window that holds 60 s
 */
export class WindowCount {
  constructor(
    readonly seenAt: number,
    readonly used: number,
    readonly offsetMs = 0,
  ) {}
}

/**
 * The counting step of the fixed and the calendar window, which differ only in where their windows start and end:
 * `now` falls in the window [windowStart, windowEnd). Admit iff used + cost <= limit; rejected requests are not
 * counted. Retry-after and reset are both the time to the window's end. `offsetMs` is how far `now` (the key's time)
 * is ahead of the clock, kept in the state.
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
  offsetMs = 0,
): Step<WindowCount> {
  state = asOf(state, windowStart, windowEnd, offsetMs)
  const used = state !== undefined && state.seenAt >= windowStart ? state.used : 0
  const toWindowEnd = windowEnd - now
  if (used + cost > limit) return rejected(state, limit - used, toWindowEnd, toWindowEnd, offsetMs)
  if (!charge) return admitted(state, limit - used, toWindowEnd, 0, offsetMs)
  // The window's start, not the charge's instant: a charge refunded across Cluster slots then leaves the key's time
  // where it was, as in memory, where it never charged (see `keyTime`).
  const next = new WindowCount(windowStart, used + cost, offsetMs)
  return admitted(next, limit - next.used, toWindowEnd, 0, offsetMs)
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
  offsetMs = 0,
): Step<WindowCount> {
  state = asOf(state, windowStart, windowEnd, offsetMs)
  if (state === undefined || state.seenAt < windowStart) {
    return countWithin(state, windowStart, windowEnd, now, 1, limit, false, offsetMs)
  }
  // Nothing left: a new key's state, as if never charged (a charge refunded across Cluster slots leaves no instant).
  const used = state.used - cost
  const refunded = used > 0 ? new WindowCount(state.seenAt, used, offsetMs) : undefined
  return countWithin(refunded, windowStart, windowEnd, now, 1, limit, false, offsetMs)
}

/**
 * The state as the step reads it, the key's offset from the clock in it (see `keyTime`): itself when nothing moved, so
 * that the store writes it only when something did. A calendar window decides by the clock: when the clock reads a
 * period earlier than the count's (it stepped back), the count moves back to the clock's period, so that a step
 * neither forgets it nor keeps the client waiting until the clock is back where it was. A fixed window decides by the
 * key's time, which is never earlier than the start of its last charge's window.
 */
function asOf(
  state: WindowCount | undefined,
  windowStart: number,
  windowEnd: number,
  offsetMs: number,
): WindowCount | undefined {
  if (state === undefined) return state
  if (state.seenAt >= windowEnd) return new WindowCount(windowStart, state.used, offsetMs)
  return state.offsetMs === offsetMs ? state : new WindowCount(state.seenAt, state.used, offsetMs)
}
