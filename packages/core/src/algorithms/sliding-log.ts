import { admitted, rejected } from './step'
import type { Algorithm, Refund } from './types'

/**
 * Admitted requests, oldest first: entry i, for start <= i < end, was admitted at `times[i]` (ms) with cost
 * `costs[i]`, and `used` is the sum of those costs. Every entry has a cost of at least 1, so a key never holds
 * more than L entries in its window.
 *
 * The arrays are append-only storage that successive states share: a new state appends after `end` when no
 * other state has, and advances `start` past expired entries, so admitting is O(1) amortized instead of a copy of
 * the whole log. No state ever changes the entries of another: the function stays pure in what a state means.
 * @example
 * const state: SlidingLogState = { times: [1000, 1250], costs: [1, 3], start: 0, end: 2, used: 4 }
 */
export class SlidingLogState {
  constructor(
    readonly times: readonly number[],
    readonly costs: readonly number[],
    readonly start: number,
    readonly end: number,
    readonly used: number,
  ) {}
}

/**
 * Sliding log: the window is (now - W, now]; an entry exactly W old has expired. Admit iff the costs in the
 * window plus this cost are at most L. Retry-after: until enough of the oldest entries expire.
 * @example
 * const rule = createLimiter({ algorithm: 'sliding-log', limit: 5, window: '1s' }).rules[0]
 * const state = { times: [1000], costs: [5], start: 0, end: 1, used: 5 }
 * const step = slidingLog(state, 1999, 1, rule, true) // rejected: retryAfterMs 1
 */
export const slidingLog: Algorithm<SlidingLogState> = (state, now, cost, { limit, windowMs }, charge) => {
  if (state === undefined) {
    if (cost > limit) return rejected<SlidingLogState>(undefined, limit, 0, Number.POSITIVE_INFINITY)
    if (!charge) return admitted<SlidingLogState>(undefined, limit, 0)
    return admitted(new SlidingLogState([now], [cost], 0, 1, cost), limit - cost, windowMs)
  }
  state = asOf(state, now)
  const { times, costs, end } = state
  const oldest = now - windowMs // entries at or before this instant have expired
  let first = state.start
  let used = state.used
  while (first < end && (times[first] as number) <= oldest) used -= costs[first++] as number
  const resetMs = first < end ? (times[end - 1] as number) + windowMs - now : 0
  if (used + cost > limit) {
    // Walk the oldest entries until enough has expired to make room for this cost.
    let freed = 0
    let retryAfterMs = Number.POSITIVE_INFINITY
    for (let i = first; i < end; i++) {
      freed += costs[i] as number
      if (used - freed + cost <= limit) {
        retryAfterMs = (times[i] as number) + windowMs - now
        break
      }
    }
    return rejected(state, limit - used, resetMs, retryAfterMs)
  }
  if (!charge) return admitted(state, limit - used, resetMs)
  let next: SlidingLogState
  if (end === times.length && first <= 64 + (end - first)) {
    // Nobody has appended past this state's end: append in place, invisible to every existing state.
    ;(times as number[]).push(now)
    ;(costs as number[]).push(cost)
    next = new SlidingLogState(times, costs, first, end + 1, used + cost)
  } else {
    // Another state has appended here already, or the expired prefix outgrew the live part: copy the live part.
    const liveTimes = times.slice(first, end)
    const liveCosts = costs.slice(first, end)
    liveTimes.push(now)
    liveCosts.push(cost)
    next = new SlidingLogState(liveTimes, liveCosts, 0, liveTimes.length, used + cost)
  }
  return admitted(next, limit - used - cost, windowMs)
}

/**
 * Time never runs backwards for a key: when the clock reads earlier than the newest entry (it stepped back), every
 * entry moves back by the same amount, so that the newest is now. A step then keeps the log's count, and its
 * entries expire one window after the client last saw them, not one window after the clock is back where it was.
 * The store writes the moved state.
 */
function asOf(state: SlidingLogState, now: number): SlidingLogState {
  const shift = now - (state.times[state.end - 1] as number)
  if (shift >= 0) return state
  const times = state.times.slice(state.start, state.end).map((time) => time + shift)
  return new SlidingLogState(times, state.costs.slice(state.start, state.end), 0, times.length, state.used)
}

/**
 * Refund: the newest entries give back `cost`, newest first.
 *
 * @example
 * const back = slidingLogRefund({ times: [1000], costs: [5], start: 0, end: 1, used: 5 }, 1500, 2, rule) // costs: [3]
 */
export const slidingLogRefund: Refund<SlidingLogState> = (state, now, cost, params) => {
  if (state === undefined) return slidingLog(state, now, 1, params, false)
  state = asOf(state, now)
  // A refund is rare: copy the live entries, then take the cost off the newest.
  const times = state.times.slice(state.start, state.end)
  const costs = state.costs.slice(state.start, state.end)
  let used = state.used
  let left = cost
  while (left > 0 && costs.length > 0) {
    const last = costs.length - 1
    const taken = Math.min(left, costs[last] as number)
    left -= taken
    used -= taken
    if (taken === costs[last]) {
      costs.pop()
      times.pop()
    } else {
      costs[last] = (costs[last] as number) - taken
    }
  }
  const next = times.length > 0 ? new SlidingLogState(times, costs, 0, times.length, used) : undefined
  return slidingLog(next, now, 1, params, false)
}
