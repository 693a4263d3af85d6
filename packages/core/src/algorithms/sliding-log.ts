import { keyTime } from './key-time'
import { admitted, rejected } from './step'
import type { Algorithm, Refund } from './types'

/**
 * Admitted requests, oldest first, one entry per millisecond in which the key admitted something: entry i, for
 * start <= i < end, was admitted at `times[i]` (ms) with cost `costs[i]` (the sum of that millisecond's costs), and
 * the newest entry, at `newestTime` with `newestCost`, comes after them. `used` is the sum of all those costs. Every
 * entry has a cost of at least 1, so a key never holds more than L entries in its window, and a busy key no more
 * than one per millisecond, as on Redis.
 *
 * The arrays are append-only storage that successive states share: a new state appends after `end` when no other
 * state has, and advances `start` past expired entries, so admitting is O(1) amortized instead of a copy of the whole
 * log. The newest entry lives in the state itself, not in the arrays, so that a request in the same millisecond adds
 * its cost to it in a new state without writing over an entry an older state still reads. No state ever changes the
 * entries of another: the function stays pure in what a state means. `offsetMs`: how far the key's time was ahead of
 * the clock when the newest entry was written (0 unless the clock stepped back, see `keyTime`).
 * @example
 * const state = new SlidingLogState([1000], [1], 0, 1, 1250, 3, 4) // 1 at 1000 ms, then 3 at 1250 ms
 */
export class SlidingLogState {
  constructor(
    readonly times: readonly number[],
    readonly costs: readonly number[],
    readonly start: number,
    readonly end: number,
    readonly newestTime: number,
    readonly newestCost: number,
    readonly used: number,
    readonly offsetMs = 0,
  ) {}
}

/**
 * Sliding log: the window is (now - W, now]; an entry exactly W old has expired. Admit iff the costs in the
 * window plus this cost are at most L. Retry-after: until enough of the oldest entries expire.
 * @example
 * const rule = createLimiter({ algorithm: 'sliding-log', limit: 5, window: '1s' }).rules[0]
 * const state = new SlidingLogState([], [], 0, 0, 1000, 5, 5)
 * const step = slidingLog(state, 1999, 1, rule, true) // rejected: retryAfterMs 1
 */
export const slidingLog: Algorithm<SlidingLogState> = (state, clock, cost, { limit, windowMs }, charge) => {
  if (state === undefined) {
    if (cost > limit) return rejected<SlidingLogState>(undefined, limit, 0, Number.POSITIVE_INFINITY)
    if (!charge) return admitted<SlidingLogState>(undefined, limit, 0)
    return admitted(new SlidingLogState([], [], 0, 0, clock, cost, cost), limit - cost, windowMs)
  }
  const now = keyTime(state.newestTime, state.offsetMs, clock)
  const offsetMs = now - clock
  state = asOf(state, offsetMs)
  const { times, costs, end, newestTime, newestCost } = state
  const oldest = now - windowMs // entries at or before this instant have expired
  // The newest entry is the last to expire: when it has, so has every other.
  const live = newestTime > oldest
  let first = live ? state.start : end
  let used = live ? state.used : 0
  while (first < end && (times[first] as number) <= oldest) used -= costs[first++] as number
  const resetMs = live ? newestTime + windowMs - now : 0
  if (used + cost > limit) {
    // Walk the oldest entries until enough has expired to make room for this cost; once the newest has expired
    // too, nothing is left, so a cost that fits the limit fits then.
    let freed = 0
    let retryAfterMs = cost > limit ? Number.POSITIVE_INFINITY : newestTime + windowMs - now
    for (let i = first; i < end; i++) {
      freed += costs[i] as number
      if (used - freed + cost <= limit) {
        retryAfterMs = (times[i] as number) + windowMs - now
        break
      }
    }
    return rejected(state, limit - used, resetMs, retryAfterMs, offsetMs)
  }
  if (!charge) return admitted(state, limit - used, resetMs, 0, offsetMs)
  let next: SlidingLogState
  if (!live) {
    // Everything has expired: a new log, so the old storage can go.
    next = new SlidingLogState([], [], 0, 0, now, cost, cost, offsetMs)
  } else if (newestTime === now) {
    // The same millisecond as the newest entry: one entry with the sum, as the window sums are the same.
    next = new SlidingLogState(times, costs, first, end, now, newestCost + cost, used + cost, offsetMs)
  } else if (end === times.length && first <= 64 + (end - first)) {
    // Nobody has appended past this state's end: the newest entry joins the arrays in place, invisible to every
    // existing state.
    ;(times as number[]).push(newestTime)
    ;(costs as number[]).push(newestCost)
    next = new SlidingLogState(times, costs, first, end + 1, now, cost, used + cost, offsetMs)
  } else {
    // Another state has appended here already, or the expired prefix outgrew the live part: copy the live part.
    const liveTimes = times.slice(first, end)
    const liveCosts = costs.slice(first, end)
    liveTimes.push(newestTime)
    liveCosts.push(newestCost)
    next = new SlidingLogState(liveTimes, liveCosts, 0, liveTimes.length, now, cost, used + cost, offsetMs)
  }
  return admitted(next, limit - used - cost, windowMs, 0, offsetMs)
}

/**
 * The state with the key's new offset from the clock (see `keyTime`): itself when that has not changed, so that the
 * store writes it only when it has. The entries stay as they are: they are in the key's time.
 */
function asOf(state: SlidingLogState, offsetMs: number): SlidingLogState {
  if (state.offsetMs === offsetMs) return state
  const { times, costs, start, end, newestTime, newestCost, used } = state
  return new SlidingLogState(times, costs, start, end, newestTime, newestCost, used, offsetMs)
}

/**
 * Refund: the newest entries give back `cost`, newest first.
 *
 * @example
 * const back = slidingLogRefund(new SlidingLogState([], [], 0, 0, 1000, 5, 5), 1500, 2, rule) // newestCost 3
 */
export const slidingLogRefund: Refund<SlidingLogState> = (state, clock, cost, params) => {
  if (state === undefined) return slidingLog(state, clock, 1, params, false)
  state = asOf(state, keyTime(state.newestTime, state.offsetMs, clock) - clock)
  // A refund is rare: copy every entry, the newest last, then take the cost off the newest ones.
  const times = state.times.slice(state.start, state.end)
  const costs = state.costs.slice(state.start, state.end)
  times.push(state.newestTime)
  costs.push(state.newestCost)
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
  const newestTime = times.pop()
  const newestCost = costs.pop()
  const next =
    newestTime === undefined || newestCost === undefined
      ? undefined
      : new SlidingLogState(times, costs, 0, times.length, newestTime, newestCost, used, state.offsetMs)
  return slidingLog(next, clock, 1, params, false)
}
