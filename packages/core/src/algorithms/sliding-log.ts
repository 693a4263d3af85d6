import type { Algorithm, Refund } from './types'

/**
 * Admitted requests, oldest first: `times[i]` (ms) and `costs[i]`. Requests admitted in the same millisecond
 * share one entry, so a key holds at most L entries (and at most one per millisecond of the window).
 * @example
 * const state: SlidingLogState = { times: [1000, 1250], costs: [1, 3] }
 */
export interface SlidingLogState {
  readonly times: readonly number[]
  readonly costs: readonly number[]
}

/**
 * Sliding log: the window is (now - W, now]; an entry exactly W old has expired. Admit iff the costs in the
 * window plus this cost are at most L. Retry-after: until enough of the oldest entries expire.
 * @example
 * const rule = createLimiter({ algorithm: 'sliding-log', limit: 5, window: '1s' }).rules[0]
 * const step = slidingLog({ times: [1000], costs: [5] }, 1999, 1, rule, true) // rejected: retryAfterMs 1
 */
export const slidingLog: Algorithm<SlidingLogState> = (state, now, cost, { limit, windowMs }, charge) => {
  const oldest = now - windowMs // entries at or before this instant have expired
  let first = 0
  let used = 0
  let times: readonly number[] = []
  let costs: readonly number[] = []
  if (state !== undefined) {
    times = state.times
    costs = state.costs
    while (first < times.length && (times[first] as number) <= oldest) first++
    for (let i = first; i < costs.length; i++) used += costs[i] as number
  }
  const newest = times.length > first ? (times[times.length - 1] as number) : undefined
  if (used + cost > limit) {
    // Walk the oldest entries until enough has expired to make room for this cost.
    let freed = 0
    let retryAfterMs = Number.POSITIVE_INFINITY
    for (let i = first; i < times.length; i++) {
      freed += costs[i] as number
      if (used - freed + cost <= limit) {
        retryAfterMs = (times[i] as number) + windowMs - now
        break
      }
    }
    const resetMs = newest === undefined ? 0 : newest + windowMs - now
    return { state, allowed: false, remaining: limit - used, resetMs, retryAfterMs, delayMs: 0 }
  }
  if (!charge) {
    const resetMs = newest === undefined ? 0 : newest + windowMs - now
    return { state, allowed: true, remaining: limit - used, resetMs, retryAfterMs: 0, delayMs: 0 }
  }
  const nextTimes = times.slice(first)
  const nextCosts = costs.slice(first)
  if (newest === now) {
    nextCosts[nextCosts.length - 1] = (nextCosts[nextCosts.length - 1] as number) + cost
  } else {
    nextTimes.push(now)
    nextCosts.push(cost)
  }
  return {
    state: { times: nextTimes, costs: nextCosts },
    allowed: true,
    remaining: limit - used - cost,
    resetMs: windowMs,
    retryAfterMs: 0,
    delayMs: 0,
  }
}

/**
 * Refund: the newest entries give back `cost`, newest first.
 *
 * @example
 * const back = slidingLogRefund({ times: [1000], costs: [5] }, 1500, 2, rule) // costs: [3]
 */
export const slidingLogRefund: Refund<SlidingLogState> = (state, now, cost, params) => {
  if (state === undefined) return slidingLog(state, now, 1, params, false)
  const times = state.times.slice()
  const costs = state.costs.slice()
  let left = cost
  while (left > 0 && costs.length > 0) {
    const last = costs.length - 1
    const taken = Math.min(left, costs[last] as number)
    left -= taken
    if (taken === costs[last]) {
      costs.pop()
      times.pop()
    } else {
      costs[last] = (costs[last] as number) - taken
    }
  }
  return slidingLog(times.length > 0 ? { times, costs } : undefined, now, 1, params, false)
}
