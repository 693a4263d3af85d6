import { ceilDiv, floorDiv } from '../math'
import type { Algorithm, AlgorithmParams, Refund } from './types'

/**
 * The last departure time: `departureMs` plus `departureFraction` / rateNumerator ms. The fraction keeps
 * departures exact when the interval between them is not a whole number of milliseconds.
 * @example
 * const state: LeakyQueueState = { departureMs: Date.now() + 500, departureFraction: 0 }
 */
export interface LeakyQueueState {
  readonly departureMs: number
  readonly departureFraction: number
}

/**
 * Leaky bucket as a queue (a shaper): each request departs at max(now, last departure) + cost / r, so the k-th
 * arrival at an empty queue waits k / r. A request that would wait longer than limit / r (the window) finds the
 * queue full and is dropped at once. Only the last departure is kept.
 * @example
 * const rule = createLimiter({ algorithm: 'leaky-bucket', limit: 6, window: '3s' }).rules[0]
 * const step = leakyQueue(undefined, 0, 1, rule, true) // step.delayMs === 500
 */
export const leakyQueue: Algorithm<LeakyQueueState> = (state, now, cost, params, charge) => {
  const { limit, rateNumerator, rateDenominator } = params
  const capacity = limit * rateDenominator // the longest wait, in units of 1 / rateNumerator ms
  state = asOf(state, now, params)
  let departureMs = now
  let departureFraction = 0
  if (state !== undefined && (state.departureMs > now || (state.departureMs === now && state.departureFraction > 0))) {
    departureMs = state.departureMs
    departureFraction = state.departureFraction
  }
  const backlog = (departureMs - now) * rateNumerator + departureFraction
  const price = cost * rateDenominator
  if (backlog + price > capacity) {
    return {
      state,
      allowed: false,
      remaining: floorDiv(capacity - backlog, rateDenominator),
      resetMs: ceilDiv(backlog, rateNumerator),
      retryAfterMs: ceilDiv(backlog + price - capacity, rateNumerator),
      delayMs: 0,
    }
  }
  if (!charge) {
    return {
      state,
      allowed: true,
      remaining: floorDiv(capacity - backlog, rateDenominator),
      resetMs: ceilDiv(backlog, rateNumerator),
      retryAfterMs: 0,
      delayMs: 0,
    }
  }
  const fraction = departureFraction + price
  departureMs += floorDiv(fraction, rateNumerator)
  departureFraction = fraction % rateNumerator
  const wait = backlog + price
  const delayMs = ceilDiv(wait, rateNumerator)
  return {
    state: { departureMs, departureFraction },
    allowed: true,
    remaining: floorDiv(capacity - wait, rateDenominator),
    resetMs: delayMs,
    retryAfterMs: 0,
    delayMs,
  }
}

/**
 * Time never runs backwards for a key. The backlog is never longer than the queue's capacity unless the clock stepped
 * back: then the queue is taken as full as of now (the most it can have held), and drains from there, instead of
 * refusing every request until the clock is back where it was. The store writes the moved state.
 */
function asOf(
  state: LeakyQueueState | undefined,
  now: number,
  { limit, rateNumerator, rateDenominator }: AlgorithmParams,
): LeakyQueueState | undefined {
  const capacity = limit * rateDenominator
  if (state === undefined || (state.departureMs - now) * rateNumerator + state.departureFraction <= capacity)
    return state
  const departureMs = now + floorDiv(capacity, rateNumerator)
  return { departureMs, departureFraction: capacity - (departureMs - now) * rateNumerator }
}

/**
 * Refund: the last departure moves earlier by the cost's interval, not before now.
 *
 * @example
 * const back = leakyQueueRefund(step.state, 0, 1, rule) // the queue is empty again
 */
export const leakyQueueRefund: Refund<LeakyQueueState> = (state, now, cost, params) => {
  const { rateNumerator, rateDenominator } = params
  state = asOf(state, now, params)
  if (state === undefined) return leakyQueue(state, now, 1, params, false)
  const backlog = (state.departureMs - now) * rateNumerator + state.departureFraction - cost * rateDenominator
  if (backlog <= 0) return leakyQueue(undefined, now, 1, params, false)
  const departureMs = now + floorDiv(backlog, rateNumerator)
  const next = { departureMs, departureFraction: backlog - (departureMs - now) * rateNumerator }
  return leakyQueue(next, now, 1, params, false)
}
