import { floorDiv } from '../util/math'
import { keyTime } from './key-time'
import type { Algorithm, Refund } from './types'
import { countWithin, refundWithin, type WindowCount } from './window-count'

/**
 * Used units in the epoch-aligned window that starts at `seenAt`, the window of the key's last charge (see {@link WindowCount}).
 *
 * @example
 * const state: FixedWindowState = new WindowCount(60_000, 3)
 */
export type FixedWindowState = WindowCount

/**
 * Fixed window: window k covers [kW, (k+1)W). Admit iff used + cost <= L; rejected requests are not counted.
 * Retry-after and reset are both the time to the window's end. The key's time never runs backwards (see `keyTime`).
 * @example
 * const rule = createLimiter({ algorithm: 'fixed-window', limit: 10, window: '1m' }).rules[0]
 * const step = fixedWindow(undefined, Date.now(), 1, rule, true) // step.allowed, step.state
 */
export const fixedWindow: Algorithm<FixedWindowState> = (state, clock, cost, { limit, windowMs }, charge) => {
  const now = state === undefined ? clock : keyTime(state.seenAt, state.offsetMs, clock)
  const windowStart = floorDiv(now, windowMs) * windowMs
  return countWithin(state, windowStart, windowStart + windowMs, now, cost, limit, charge, now - clock)
}

/**
 * Refund: only the current window's count can go down; a past window is already forgotten.
 *
 * @example
 * const back = fixedWindowRefund(step.state, Date.now(), 1, rule)
 */
export const fixedWindowRefund: Refund<FixedWindowState> = (state, clock, cost, { limit, windowMs }) => {
  const now = state === undefined ? clock : keyTime(state.seenAt, state.offsetMs, clock)
  const windowStart = floorDiv(now, windowMs) * windowMs
  return refundWithin(state, windowStart, windowStart + windowMs, now, cost, limit, now - clock)
}
