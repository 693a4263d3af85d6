import { ceilDiv, floorDiv } from '../util/math'
import { admitted, rejected } from './step'
import type { Algorithm, AlgorithmParams, Refund } from './types'

/**
 * The last departure time: `departureMs` plus `departureFraction` / rateNumerator ms. The fraction keeps
 * departures exact when the interval between them is not a whole number of milliseconds. A class, not a literal
 * (see `step.ts`).
 * @example
 * const state: LeakyQueueState = { departureMs: Date.now() + 500, departureFraction: 0 }
 */
export class LeakyQueueState {
  constructor(
    readonly departureMs: number,
    readonly departureFraction: number,
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
    const retryAfterMs = ceilDiv(backlog + price - capacity, rateNumerator)
    return rejected(state, floorDiv(capacity - backlog, rateDenominator), ceilDiv(backlog, rateNumerator), retryAfterMs)
  }
  if (!charge) return admitted(state, floorDiv(capacity - backlog, rateDenominator), ceilDiv(backlog, rateNumerator))
  const fraction = departureFraction + price
  departureMs += floorDiv(fraction, rateNumerator)
  departureFraction = fraction % rateNumerator
  const wait = backlog + price
  const delayMs = ceilDiv(wait, rateNumerator)
  const next = new LeakyQueueState(departureMs, departureFraction)
  return admitted(next, floorDiv(capacity - wait, rateDenominator), delayMs, delayMs)
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
  return new LeakyQueueState(departureMs, capacity - (departureMs - now) * rateNumerator)
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
  const next = new LeakyQueueState(departureMs, backlog - (departureMs - now) * rateNumerator)
  return leakyQueue(next, now, 1, params, false)
}
