import { ceilDiv, floorDiv } from '../util/math'
import { keyTime } from './key-time'
import { admitted, rejected } from './step'
import type { Algorithm, Refund } from './types'

/**
 * `tokens` in units of 1 / rateDenominator token (an integer), as of `updatedAt` (ms, the key's time), which was
 * `offsetMs` ahead of the clock (0 unless the clock stepped back, see `keyTime`). A class, not a literal (see
 * `step.ts`).
 * @example
 * const state = new TokenBucketState(4 * rule.rateDenominator, Date.now()) // 4 tokens
 */
export class TokenBucketState {
  constructor(
    readonly tokens: number,
    readonly updatedAt: number,
    readonly offsetMs = 0,
  ) {}
}

/**
 * Token bucket: tokens = min(B, tokens + elapsed * r), refilled lazily, starting full. Admit iff tokens >= cost
 * (no partial payment), then tokens -= cost. Retry-after (cost - tokens) / r; reset (B - tokens) / r.
 * @example
 * const rule = createLimiter({ algorithm: 'token-bucket', limit: 1, rate: 0.5 }).rules[0]
 * tokenBucket(new TokenBucketState(0, 0), 1000, 1, rule, true).retryAfterMs // 1000: half a token to go
 */
export const tokenBucket: Algorithm<TokenBucketState> = (state, clock, cost, params, charge) => {
  const { limit, rateNumerator, rateDenominator } = params
  const capacity = limit * rateDenominator
  let tokens = capacity
  let now = clock
  if (state !== undefined) {
    now = keyTime(state.updatedAt, state.offsetMs, clock)
    state = asOf(state, now - clock)
    tokens = Math.min(capacity, state.tokens + (now - state.updatedAt) * rateNumerator)
  }
  const price = cost * rateDenominator
  if (tokens < price) {
    const retryAfterMs = ceilDiv(price - tokens, rateNumerator)
    const resetMs = ceilDiv(capacity - tokens, rateNumerator)
    return rejected(state, floorDiv(tokens, rateDenominator), resetMs, retryAfterMs, now - clock)
  }
  if (charge) tokens -= price
  const next = charge ? new TokenBucketState(tokens, now, now - clock) : state
  return admitted(next, floorDiv(tokens, rateDenominator), ceilDiv(capacity - tokens, rateNumerator), 0, now - clock)
}

/**
 * The state with the key's new offset from the clock (see `keyTime`): itself when that has not changed, so that the
 * store writes it only when it has.
 */
function asOf(state: TokenBucketState, offsetMs: number): TokenBucketState {
  return state.offsetMs === offsetMs ? state : new TokenBucketState(state.tokens, state.updatedAt, offsetMs)
}

/**
 * Refund: the tokens come back, up to the capacity.
 *
 * @example
 * const back = tokenBucketRefund(new TokenBucketState(0, 0), 0, 1, rule) // one token back
 */
export const tokenBucketRefund: Refund<TokenBucketState> = (state, clock, cost, params) => {
  if (state === undefined) return tokenBucket(state, clock, 1, params, false)
  const now = keyTime(state.updatedAt, state.offsetMs, clock)
  const capacity = params.limit * params.rateDenominator
  const tokens = Math.min(capacity, state.tokens + (now - state.updatedAt) * params.rateNumerator)
  const next = new TokenBucketState(Math.min(capacity, tokens + cost * params.rateDenominator), now, now - clock)
  return tokenBucket(next, clock, 1, params, false)
}
