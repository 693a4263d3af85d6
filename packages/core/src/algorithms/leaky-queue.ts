import { ceilDiv, floorDiv } from '../util/math'
import { keyTime } from './key-time'
import { admitted, rejected } from './step'
import type { Algorithm, AlgorithmParams, Refund } from './types'

/**
 * The last departure time: `departureMs` plus `departureFraction` / rateNumerator ms, in the key's time, which was
 * `offsetMs` ahead of the clock (0 unless the clock stepped back, see `keyTime`). The fraction keeps departures exact
 * when the interval between them is not a whole number of milliseconds. A class, not a literal (see `step.ts`).
 * @example
 * const state = new LeakyQueueState(Date.now() + 500, 0)
 */
export class LeakyQueueState {
  constructor(
    readonly departureMs: number,
    readonly departureFraction: number,
    readonly offsetMs = 0,
  ) {}
}

/**
 * Leaky bucket as a queue (a shaper): each request departs at max(now, last departure) + cost / r, so the k-th
 * arrival at an empty queue waits k / r. A request that would wait longer than limit / r (the window) finds the
 * queue full and is dropped at once. Only the last departure is kept.
 * @example
 * const rule = createLimiter({ algorithm: 'leaky-bucket', limit: 6, window: '3s' }).rules[0]
 * const step = leakyQueue(undefined, 0, 1, rule, true) // step.delayMs === 500
 */
export const leakyQueue: Algorithm<LeakyQueueState> = (state, clock, cost, params, charge) => {
  const { limit, rateNumerator, rateDenominator } = params
  const capacity = limit * rateDenominator // the longest wait, in units of 1 / rateNumerator ms
  let now = clock
  if (state !== undefined) {
    now = keyTime(seenAt(state, params), state.offsetMs, clock)
    state = asOf(state, now, params, now - clock)
  }
  const aheadMs = now - clock
  let departureMs = now
  let departureFraction = 0
  if (state !== undefined && (state.departureMs > now || (state.departureMs === now && state.departureFraction > 0))) {
    departureMs = state.departureMs
    departureFraction = state.departureFraction
  }
  const backlog = (departureMs - now) * rateNumerator + departureFraction
  const price = cost * rateDenominator
  if (backlog + price > capacity) {
    const retryAfterMs = ceilDiv(backlog + price - capacity, rateNumerator)
    const resetMs = ceilDiv(backlog, rateNumerator)
    return rejected(state, floorDiv(capacity - backlog, rateDenominator), resetMs, retryAfterMs, aheadMs)
  }
  if (!charge) {
    return admitted(state, floorDiv(capacity - backlog, rateDenominator), ceilDiv(backlog, rateNumerator), 0, aheadMs)
  }
  const fraction = departureFraction + price
  departureMs += floorDiv(fraction, rateNumerator)
  departureFraction = fraction % rateNumerator
  const wait = backlog + price
  const delayMs = ceilDiv(wait, rateNumerator)
  const next = new LeakyQueueState(departureMs, departureFraction, aheadMs)
  return admitted(next, floorDiv(capacity - wait, rateDenominator), delayMs, delayMs, aheadMs)
}

/**
 * The key's last instant, as far as the queue can tell: a queue is never longer than its capacity when written, so it
 * was written no earlier than its capacity's wait before its last departure.
 */
function seenAt(state: LeakyQueueState, { limit, rateNumerator, rateDenominator }: AlgorithmParams): number {
  return state.departureMs - floorDiv(limit * rateDenominator, rateNumerator)
}

/**
 * The state as of the key's time `now`, `offsetMs` ahead of the clock (see `keyTime`): itself when nothing moved, so
 * that the store writes it only when something did. The backlog is never longer than the queue's capacity, but by the
 * fraction of a millisecond that `seenAt` rounds off: then the queue is taken as full as of now.
 */
function asOf(
  state: LeakyQueueState,
  now: number,
  { limit, rateNumerator, rateDenominator }: AlgorithmParams,
  offsetMs: number,
): LeakyQueueState {
  const capacity = limit * rateDenominator
  if ((state.departureMs - now) * rateNumerator + state.departureFraction <= capacity) {
    return state.offsetMs === offsetMs
      ? state
      : new LeakyQueueState(state.departureMs, state.departureFraction, offsetMs)
  }
  const departureMs = now + floorDiv(capacity, rateNumerator)
  return new LeakyQueueState(departureMs, capacity - (departureMs - now) * rateNumerator, offsetMs)
}

/**
 * Refund: the last departure moves earlier by the cost's interval, not before now.
 *
 * @example
 * const back = leakyQueueRefund(step.state, 0, 1, rule) // the queue is empty again
 */
export const leakyQueueRefund: Refund<LeakyQueueState> = (state, clock, cost, params) => {
  const { rateNumerator, rateDenominator } = params
  if (state === undefined) return leakyQueue(state, clock, 1, params, false)
  const now = keyTime(seenAt(state, params), state.offsetMs, clock)
  state = asOf(state, now, params, now - clock)
  const backlog = (state.departureMs - now) * rateNumerator + state.departureFraction - cost * rateDenominator
  if (backlog <= 0) return leakyQueue(undefined, clock, 1, params, false)
  const departureMs = now + floorDiv(backlog, rateNumerator)
  const next = new LeakyQueueState(departureMs, backlog - (departureMs - now) * rateNumerator, now - clock)
  return leakyQueue(next, clock, 1, params, false)
}
