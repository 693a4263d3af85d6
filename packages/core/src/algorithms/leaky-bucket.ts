import { ceilDiv, floorDiv } from '../util/math'
import { keyTime } from './key-time'
import { admitted, rejected } from './step'
import type { Algorithm, Refund } from './types'

/**
 * `level` in units of 1 / rateDenominator request (an integer), as of `updatedAt` (ms, the key's time), which was
 * `offsetMs` ahead of the clock (0 unless the clock stepped back, see `keyTime`). A class, not a literal (see
 * `step.ts`).
 *
 * @example
 * const state = new LeakyBucketState(3 * rule.rateDenominator, Date.now()) // 3 requests queued
 */
export class LeakyBucketState {
  constructor(
    readonly level: number,
    readonly updatedAt: number,
    readonly offsetMs = 0,
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
export const leakyBucket: Algorithm<LeakyBucketState> = (state, clock, cost, params, charge) => {
  const { limit, rateNumerator, rateDenominator } = params
  const capacity = limit * rateDenominator
  let level = 0
  let now = clock
  if (state !== undefined) {
    now = keyTime(state.updatedAt, state.offsetMs, clock)
    state = asOf(state, now - clock)
    level = Math.max(0, state.level - (now - state.updatedAt) * rateNumerator)
  }
  const price = cost * rateDenominator
  if (level + price > capacity) {
    const retryAfterMs = ceilDiv(level + price - capacity, rateNumerator)
    const resetMs = ceilDiv(level, rateNumerator)
    return rejected(state, floorDiv(capacity - level, rateDenominator), resetMs, retryAfterMs, now - clock)
  }
  if (charge) level += price
  const next = charge ? new LeakyBucketState(level, now, now - clock) : state
  return admitted(next, floorDiv(capacity - level, rateDenominator), ceilDiv(level, rateNumerator), 0, now - clock)
}

/**
 * The state with the key's new offset from the clock (see `keyTime`): itself when that has not changed, so that the
 * store writes it only when it has.
 */
function asOf(state: LeakyBucketState, offsetMs: number): LeakyBucketState {
  return state.offsetMs === offsetMs ? state : new LeakyBucketState(state.level, state.updatedAt, offsetMs)
}

/**
 * Refund: the level goes down by the cost, not below empty.
 *
 * @example
 * const back = leakyBucketRefund(step.state, Date.now(), 1, rule)
 */
export const leakyBucketRefund: Refund<LeakyBucketState> = (state, clock, cost, params) => {
  if (state === undefined) return leakyBucket(state, clock, 1, params, false)
  const now = keyTime(state.updatedAt, state.offsetMs, clock)
  const level = Math.max(0, state.level - (now - state.updatedAt) * params.rateNumerator)
  const next = new LeakyBucketState(Math.max(0, level - cost * params.rateDenominator), now, now - clock)
  return leakyBucket(next, clock, 1, params, false)
}
