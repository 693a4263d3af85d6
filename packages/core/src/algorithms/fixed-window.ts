import { floorDiv } from '../math'
import { admitted, rejected } from './step'
import type { Algorithm, Refund } from './types'

/**
 * Used units in the epoch-aligned window that starts at `windowStart`. A class, not a literal (see `step.ts`).
 *
 * @example
 * const state: FixedWindowState = { windowStart: 60_000, used: 3 }
 */
export class FixedWindowState {
  constructor(
    readonly windowStart: number,
    readonly used: number,
  ) {}
}

/**
 * Fixed window: window k covers [kW, (k+1)W). Admit iff used + cost <= L; rejected requests are not counted.
 * Retry-after and reset are both the time to the window's end.
 * @example
 * const rule = createLimiter({ algorithm: 'fixed-window', limit: 10, window: '1m' }).rules[0]
 * const step = fixedWindow(undefined, Date.now(), 1, rule, true) // step.allowed, step.state
 */
export const fixedWindow: Algorithm<FixedWindowState> = (state, now, cost, { limit, windowMs }, charge) => {
  const windowStart = floorDiv(now, windowMs) * windowMs
  state = asOf(state, windowStart)
  const used = state !== undefined && state.windowStart === windowStart ? state.used : 0
  const toWindowEnd = windowStart + windowMs - now
  if (used + cost > limit) return rejected(state, limit - used, toWindowEnd, toWindowEnd)
  if (!charge) return admitted(state, limit - used, toWindowEnd)
  const next = new FixedWindowState(windowStart, used + cost)
  return admitted(next, limit - next.used, toWindowEnd)
}

/**
 * Time never runs backwards for a key: when the clock reads a window earlier than the state's (it stepped back), the
 * count moves back to the clock's window. A step then neither forgets the count (which would admit twice the
 * limit) nor keeps the client waiting until the clock is back where it was. The store writes the moved state.
 */
function asOf(state: FixedWindowState | undefined, windowStart: number): FixedWindowState | undefined {
  return state !== undefined && state.windowStart > windowStart ? new FixedWindowState(windowStart, state.used) : state
}

/**
 * Refund: only the current window's count can go down; a past window is already forgotten.
 *
 * @example
 * const back = fixedWindowRefund(step.state, Date.now(), 1, rule)
 */
export const fixedWindowRefund: Refund<FixedWindowState> = (state, now, cost, params) => {
  const windowStart = floorDiv(now, params.windowMs) * params.windowMs
  state = asOf(state, windowStart)
  if (state === undefined || state.windowStart !== windowStart) return fixedWindow(state, now, 1, params, false)
  return fixedWindow(new FixedWindowState(windowStart, Math.max(0, state.used - cost)), now, 1, params, false)
}
