import { ceilDiv, floorDiv } from '../util/math'
import { admitted, rejected } from './step'
import type { Algorithm, Refund } from './types'

/**
 * `level` in units of 1 / rateDenominator request (an integer), as of `updatedAt` (ms). A class, not a literal (see
 * `step.ts`).
 *
 * @example
 * const state: LeakyBucketState = { level: 3 * rule.rateDenominator, updatedAt: Date.now() } // 3 requests queued
 */
export class LeakyBucketState {
  constructor(
    readonly level: number,
    readonly updatedAt: number,
  ) {}
}

/**
 * Leaky bucket as a meter (a policer): level = max(0, level - elapsed * r), starting empty. Admit iff
 * level + cost <= B, then level += cost. It admits exactly what a token bucket of the same B and r admits
 * (its level is the token bucket's B - tokens).
 * @example
 * const rule = createLimiter({ algorithm: 'leaky-bucket', limit: 10, window: '1s' }).rules[0]
 * const step = leakyBucket(undefined, Date.now(), 1, rule, true)
 */
export const leakyBucket: Algorithm<LeakyBucketState> = (state, now, cost, params, charge) => {
  const { limit, rateNumerator, rateDenominator } = params
  const capacity = limit * rateDenominator
  let level = 0
  state = asOf(state, now)
  if (state !== undefined) level = Math.max(0, state.level - (now - state.updatedAt) * rateNumerator)
  const price = cost * rateDenominator
  if (level + price > capacity) {
    const retryAfterMs = ceilDiv(level + price - capacity, rateNumerator)
    return rejected(state, floorDiv(capacity - level, rateDenominator), ceilDiv(level, rateNumerator), retryAfterMs)
  }
  if (charge) level += price
  const next = charge ? new LeakyBucketState(level, now) : state
  return admitted(next, floorDiv(capacity - level, rateDenominator), ceilDiv(level, rateNumerator))
}

/**
 * Time never runs backwards for a key: when the clock reads earlier than the state's last update (it stepped back),
 * the state moves back to now with its level, and drains from there. Otherwise nothing would drain until the clock
 * was back where it was, locking a full bucket's client out for the length of the step. The store writes the moved
 * state.
 */
function asOf(state: LeakyBucketState | undefined, now: number): LeakyBucketState | undefined {
  return state !== undefined && state.updatedAt > now ? new LeakyBucketState(state.level, now) : state
}

/**
 * Refund: the level goes down by the cost, not below empty.
 *
 * @example
 * const back = leakyBucketRefund(step.state, Date.now(), 1, rule)
 */
export const leakyBucketRefund: Refund<LeakyBucketState> = (state, now, cost, params) => {
  state = asOf(state, now)
  if (state === undefined) return leakyBucket(state, now, 1, params, false)
  const level = Math.max(0, state.level - (now - state.updatedAt) * params.rateNumerator)
  const next = new LeakyBucketState(Math.max(0, level - cost * params.rateDenominator), now)
  return leakyBucket(next, now, 1, params, false)
}
