import { ceilDiv, floorDiv } from '../util/math'
import { admitted, rejected } from './step'
import type { Algorithm, Refund } from './types'

/**
 * `tokens` in units of 1 / rateDenominator token (an integer), as of `updatedAt` (ms). A class, not a literal (see
 * `step.ts`).
 * @example
 * const state: TokenBucketState = { tokens: 4 * rule.rateDenominator, updatedAt: Date.now() } // 4 tokens
 */
export class TokenBucketState {
  constructor(
    readonly tokens: number,
    readonly updatedAt: number,
  ) {}
}

/**
 * Token bucket: tokens = min(B, tokens + elapsed * r), refilled lazily, starting full. Admit iff tokens >= cost
 * (no partial payment), then tokens -= cost. Retry-after (cost - tokens) / r; reset (B - tokens) / r.
 * @example
 * const rule = createLimiter({ algorithm: 'token-bucket', limit: 1, rate: 0.5 }).rules[0]
 * tokenBucket({ tokens: 0, updatedAt: 0 }, 1000, 1, rule, true).retryAfterMs // 1000: half a token to go
 */
export const tokenBucket: Algorithm<TokenBucketState> = (state, now, cost, params, charge) => {
  const { limit, rateNumerator, rateDenominator } = params
  const capacity = limit * rateDenominator
  let tokens = capacity
  state = asOf(state, now)
  if (state !== undefined) tokens = Math.min(capacity, state.tokens + (now - state.updatedAt) * rateNumerator)
  const price = cost * rateDenominator
  if (tokens < price) {
    const retryAfterMs = ceilDiv(price - tokens, rateNumerator)
    return rejected(state, floorDiv(tokens, rateDenominator), ceilDiv(capacity - tokens, rateNumerator), retryAfterMs)
  }
  if (charge) tokens -= price
  const next = charge ? new TokenBucketState(tokens, now) : state
  return admitted(next, floorDiv(tokens, rateDenominator), ceilDiv(capacity - tokens, rateNumerator))
}

/**
 * Time never runs backwards for a key: when the clock reads earlier than the state's last update (it stepped back),
 * the state moves back to now with its tokens, and refills from there. Otherwise nothing would refill until the clock
 * was back where it was, locking an empty bucket's client out for the length of the step. The store writes the
 * moved state.
 */
function asOf(state: TokenBucketState | undefined, now: number): TokenBucketState | undefined {
  return state !== undefined && state.updatedAt > now ? new TokenBucketState(state.tokens, now) : state
}

/**
 * Refund: the tokens come back, up to the capacity.
 *
 * @example
 * const back = tokenBucketRefund({ tokens: 0, updatedAt: 0 }, 0, 1, rule) // one token back
 */
export const tokenBucketRefund: Refund<TokenBucketState> = (state, now, cost, params) => {
  state = asOf(state, now)
  if (state === undefined) return tokenBucket(state, now, 1, params, false)
  const capacity = params.limit * params.rateDenominator
  const tokens = Math.min(capacity, state.tokens + (now - state.updatedAt) * params.rateNumerator)
  const next = new TokenBucketState(Math.min(capacity, tokens + cost * params.rateDenominator), now)
  return tokenBucket(next, now, 1, params, false)
}
