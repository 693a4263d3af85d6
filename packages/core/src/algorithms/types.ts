/** The algorithms a rule can use. */
export type AlgorithmName = 'fixed-window' | 'sliding-log' | 'sliding-window' | 'token-bucket' | 'leaky-bucket'

/** The algorithms a store runs: the five public ones, and the leaky bucket as a queue behind `schedule`. */
export type StoreAlgorithmName = AlgorithmName | 'leaky-queue'

/**
 * The parameters an algorithm reads: the part of a compiled rule that decides admissions.
 *
 * Buckets keep their state in integers: a token is `rateDenominator` units, and `rateNumerator` units flow per
 * millisecond (r = rateNumerator / rateDenominator tokens per ms). That keeps JS and Lua exact and in agreement.
 */
export interface AlgorithmParams {
  /** L, or the capacity B of a bucket, or the queue's length. */
  readonly limit: number
  /** W in milliseconds; for buckets the time to refill (or drain) from empty to full. */
  readonly windowMs: number
  /** Bucket refill (leak) units per millisecond. */
  readonly rateNumerator: number
  /** Bucket units per token. */
  readonly rateDenominator: number
}

/**
 * What an algorithm says about one request against one key. `state` is the key's new state when the request was
 * admitted and charged, or the state it was given (unchanged) otherwise.
 */
export interface Step<S> {
  readonly state: S | undefined
  readonly allowed: boolean
  /** Requests of cost 1 that would still be admitted right now, after this decision. */
  readonly remaining: number
  /** Milliseconds until the key is back to its full allowance if nothing else arrives. */
  readonly resetMs: number
  /** 0 when admitted; otherwise the shortest wait after which the same request would be admitted. */
  readonly retryAfterMs: number
  /** Queue only: milliseconds from now until an admitted request departs. 0 for every other algorithm. */
  readonly delayMs: number
}

/**
 * A rate-limiting algorithm: a pure function of (state, now, cost, params). It never mutates `state`.
 * `charge` false asks what would happen (peek) without charging.
 */
export type Algorithm<S> = (
  state: S | undefined,
  now: number,
  cost: number,
  params: AlgorithmParams,
  charge: boolean,
) => Step<S>

/**
 * Gives `cost` back to a key whose request was admitted and charged (for example because the response failed and
 * should not count). A pure function like {@link Algorithm}; it returns the new state and the numbers after the
 * refund. Units already gone (an expired window, refilled tokens) are not given back twice.
 */
export type Refund<S> = (state: S | undefined, now: number, cost: number, params: AlgorithmParams) => Step<S>
