import { floorDiv } from '../util/math'
import { keyTime } from './key-time'
import { admitted, rejected } from './step'
import type { Algorithm, Refund } from './types'

/**
 * Counts of the window that starts at `seenAt` (the window of the key's last charge: its start, not the charge's
 * instant, so that a charge refunded across Cluster slots leaves it) and of the one before it. `offsetMs`: how far the
 * key's time was ahead of the clock when it was written (0 unless the clock stepped back, see `keyTime`). A class, not
 * a literal (see `step.ts`).
 *
 * @example
 * const state = new SlidingWindowState(60_000, 80, 30) // 30 in the window that holds 60 s, 80 in the one before
 */
export class SlidingWindowState {
  constructor(
    readonly seenAt: number,
    readonly previous: number,
    readonly current: number,
    readonly offsetMs = 0,
  ) {}
}

/**
 * Sliding window counter: with prev used in window k-1, cur in window k and e = now - kW, admit iff
 * floor(prev * (W - e) / W) + cur + cost <= L. Integer arithmetic throughout, so Lua and JS agree. The key's time
 * never runs backwards (see `keyTime`).
 * @example
 * const rule = createLimiter({ limit: 100, window: '60s' }).rules[0]
 * slidingWindow(new SlidingWindowState(60_000, 80, 30), 75_000, 1, rule, true).allowed // true: estimate 90
 */
export const slidingWindow: Algorithm<SlidingWindowState> = (state, clock, cost, { limit, windowMs }, charge) => {
  let now = clock
  if (state !== undefined) {
    now = keyTime(state.seenAt, state.offsetMs, clock)
    state = asOf(state, now - clock)
  }
  const windowStart = floorDiv(now, windowMs) * windowMs
  let previous = 0
  let current = 0
  if (state !== undefined) {
    const stateWindowStart = floorDiv(state.seenAt, windowMs) * windowMs
    if (stateWindowStart === windowStart) {
      previous = state.previous
      current = state.current
    } else if (stateWindowStart === windowStart - windowMs) {
      previous = state.current
    }
  }
  const elapsed = now - windowStart
  const estimate = floorDiv(previous * (windowMs - elapsed), windowMs) + current
  const aheadMs = now - clock
  if (estimate + cost > limit) {
    const retryAfterMs = slidingRetryAfterMs(previous, current, elapsed, cost, limit, windowMs)
    const resetMs = slidingResetMs(previous, current, elapsed, windowMs)
    return rejected(state, Math.max(0, limit - estimate), resetMs, retryAfterMs, aheadMs)
  }
  if (!charge) {
    return admitted(state, limit - estimate, slidingResetMs(previous, current, elapsed, windowMs), 0, aheadMs)
  }
  current += cost
  // The window's start, not the charge's instant: a charge refunded across Cluster slots then leaves the key's time
  // where it was, as in memory, where it never charged (see `keyTime`).
  const next = new SlidingWindowState(windowStart, previous, current, aheadMs)
  return admitted(next, limit - estimate - cost, slidingResetMs(previous, current, elapsed, windowMs), 0, aheadMs)
}

/**
 * The state with the key's new offset from the clock (see `keyTime`): itself when that has not changed, so that the
 * store writes it only when it has.
 */
function asOf(state: SlidingWindowState, offsetMs: number): SlidingWindowState {
  if (state.offsetMs === offsetMs) return state
  return new SlidingWindowState(state.seenAt, state.previous, state.current, offsetMs)
}

/**
 * The smallest offset e' in a window where floor(weight * (W - e') / W) <= allowed, that is
 * weight * (W - e') <= (allowed + 1) * W - 1. Returns W when no offset inside the window qualifies.
 */
function firstOffsetAtMost(weight: number, allowed: number, windowMs: number): number {
  if (weight === 0) return 0
  return Math.max(0, windowMs - floorDiv((allowed + 1) * windowMs - 1, weight))
}

/** Time until the weighted estimate would let `cost` through, exactly from the formula. */
function slidingRetryAfterMs(
  previous: number,
  current: number,
  elapsed: number,
  cost: number,
  limit: number,
  windowMs: number,
): number {
  // Still in this window: the previous window's weight has to fall far enough.
  const room = limit - current - cost
  if (room >= 0) {
    const offset = firstOffsetAtMost(previous, room, windowMs)
    if (offset < windowMs) return offset - elapsed
  }
  // In the next window this window's count becomes the previous one, and nothing is current.
  return windowMs - elapsed + firstOffsetAtMost(current, limit - cost, windowMs)
}

/** Time until the estimate is 0 and stays 0. */
function slidingResetMs(previous: number, current: number, elapsed: number, windowMs: number): number {
  if (current === 0) return Math.max(0, firstOffsetAtMost(previous, 0, windowMs) - elapsed)
  return windowMs - elapsed + firstOffsetAtMost(current, 0, windowMs)
}

/**
 * Refund: the count of the window the request was charged in (now current or previous) goes down.
 *
 * @example
 * const back = slidingWindowRefund(new SlidingWindowState(60_000, 0, 3), 61_000, 1, rule) // current 2
 */
export const slidingWindowRefund: Refund<SlidingWindowState> = (state, now, cost, params) => {
  if (state === undefined) return slidingWindow(state, now, 1, params, false)
  const current = Math.max(0, state.current - cost)
  // Nothing left: a new key's state, as if never charged (a charge refunded across Cluster slots leaves no instant).
  if (current === 0 && state.previous === 0) return slidingWindow(undefined, now, 1, params, false)
  const next = new SlidingWindowState(state.seenAt, state.previous, current, state.offsetMs)
  return slidingWindow(next, now, 1, params, false)
}
