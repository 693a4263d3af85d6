import type { CalendarPeriod } from '../calendar'

/**
 * The algorithms a rule can use.
 *
 * @example
 * const algorithm: AlgorithmName = 'token-bucket'
 */
export type AlgorithmName = 'fixed-window' | 'sliding-log' | 'sliding-window' | 'token-bucket' | 'leaky-bucket'

/**
 * The algorithms a store runs: the five public ones, the leaky bucket as a queue behind `schedule`, and the
 * calendar window of a rule with a `period` (a quota).
 *
 * @example
 * const names: StoreAlgorithmName[] = ['leaky-bucket', 'leaky-queue']
 */
export type StoreAlgorithmName = AlgorithmName | 'leaky-queue' | 'calendar-window'

/**
 * Whether an algorithm is a bucket: it takes a `rate`, and its state counts in units of the rate's denominator (see
 * {@link AlgorithmParams}), so two rates that admit alike (10 per 1000 ms, 1 per 100 ms) read one stored state
 * differently.
 *
 * @example
 * isBucket('leaky-queue') // true
 * isBucket('sliding-window') // false
 */
export function isBucket(algorithm: StoreAlgorithmName): boolean {
  return algorithm === 'token-bucket' || algorithm === 'leaky-bucket' || algorithm === 'leaky-queue'
}

/**
 * The parameters an algorithm reads: the part of a compiled rule that decides admissions.
 *
 * Buckets keep their state in integers: a token is `rateDenominator` units, and `rateNumerator` units flow per
 * millisecond (r = rateNumerator / rateDenominator tokens per ms). That keeps JS and Lua exact and in agreement.
 * @example
 * const params: AlgorithmParams = createLimiter({ limit: 10, window: '1s' }).rules[0]
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
  /** A quota's calendar period (the `'calendar-window'` algorithm); undefined for every other algorithm. */
  readonly calendar?: CalendarPeriod | undefined
}

/**
 * What an algorithm says about one request against one key. `state` is the key's new state when the request was
 * admitted and charged, or the state it was given otherwise. Time never runs backwards for a key (see `keyTime`): when
 * the key's offset from the clock changes (the clock stepped back, or came back), the state comes back with the new
 * offset, and the store writes it although nothing was charged. So a store writes every step whose `state` is not the
 * one given.
 * @example
 * const step: Step<TokenBucketState> = tokenBucket(state, Date.now(), 1, params, true)
 * if (step.state !== state) save(step.state)
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
  /**
   * How far the key's time is ahead of the clock (see `keyTime`): 0 unless the clock stepped back. The store keeps a
   * state this much longer than `resetMs`, so that the key's counts are still there when the clock comes back.
   */
  readonly aheadMs?: number
}

/**
 * A rate-limiting algorithm: a pure function of (state, now, cost, params). It never mutates `state`.
 * `charge` false asks what would happen (peek) without charging.
 * @example
 * const everyOther: Algorithm<number> = (count = 0, _now, _cost, _params, charge) => ({
 *   state: charge ? count + 1 : count, allowed: count % 2 === 0, remaining: 0, resetMs: 0, retryAfterMs: 0, delayMs: 0,
 * })
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
 * @example
 * const back: Refund<TokenBucketState> = tokenBucketRefund
 */
export type Refund<S> = (state: S | undefined, now: number, cost: number, params: AlgorithmParams) => Step<S>
