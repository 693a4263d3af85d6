import { floorDiv } from '../util/math'
import { admitted, rejected } from './step'
import type { Algorithm, Refund } from './types'

/**
 * Counts of the current window (starting at `windowStart`) and of the one before it. A class, not a literal (see
 * `step.ts`).
 *
 * @example
 * const state: SlidingWindowState = { windowStart: 60_000, previous: 80, current: 30 }
 */
export class SlidingWindowState {
  constructor(
    readonly windowStart: number,
    readonly previous: number,
    readonly current: number,
  ) {}
}

/**
 * Sliding window counter: with prev used in window k-1, cur in window k and e = now - kW, admit iff
 * floor(prev * (W - e) / W) + cur + cost <= L. Integer arithmetic throughout, so Lua and JS agree.
 * @example
 * const rule = createLimiter({ limit: 100, window: '60s' }).rules[0]
 * slidingWindow({ windowStart: 60_000, previous: 80, current: 30 }, 75_000, 1, rule, true).allowed // true: estimate 90
 */
export const slidingWindow: Algorithm<SlidingWindowState> = (state, now, cost, { limit, windowMs }, charge) => {
  const windowStart = floorDiv(now, windowMs) * windowMs
  state = asOf(state, windowStart)
  let previous = 0
  let current = 0
  if (state !== undefined) {
    if (state.windowStart === windowStart) {
      previous = state.previous
      current = state.current
    } else if (state.windowStart === windowStart - windowMs) {
      previous = state.current
    }
  }
  const elapsed = now - windowStart
  const estimate = floorDiv(previous * (windowMs - elapsed), windowMs) + current
  if (estimate + cost > limit) {
    const retryAfterMs = slidingRetryAfterMs(previous, current, elapsed, cost, limit, windowMs)
    return rejected(
      state,
      Math.max(0, limit - estimate),
      slidingResetMs(previous, current, elapsed, windowMs),
      retryAfterMs,
    )
  }
  if (!charge) return admitted(state, limit - estimate, slidingResetMs(previous, current, elapsed, windowMs))
  current += cost
  const next = new SlidingWindowState(windowStart, previous, current)
  return admitted(next, limit - estimate - cost, slidingResetMs(previous, current, elapsed, windowMs))
}

/**
 * Time never runs backwards for a key: when the clock reads a window earlier than the state's (it stepped back), both
 * counts move back with it, to the clock's window. A step then neither forgets them (which would admit twice the
 * limit) nor keeps the client waiting until the clock is back where it was. The store writes the moved state.
 */
function asOf(state: SlidingWindowState | undefined, windowStart: number): SlidingWindowState | undefined {
  if (state === undefined || state.windowStart <= windowStart) return state
  return new SlidingWindowState(windowStart, state.previous, state.current)
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
 * const back = slidingWindowRefund({ windowStart: 60_000, previous: 0, current: 3 }, 61_000, 1, rule) // current 2
 */
export const slidingWindowRefund: Refund<SlidingWindowState> = (state, now, cost, params) => {
  if (state === undefined) return slidingWindow(state, now, 1, params, false)
  const next = new SlidingWindowState(state.windowStart, state.previous, Math.max(0, state.current - cost))
  return slidingWindow(next, now, 1, params, false)
}
