// The option types of a limiter, one shape per way of giving a rule (limit per window, a bucket's rate, a quota), so that the compiler catches what the runtime checks in
// rules.ts would otherwise catch only when the code runs: a rule without a `window`, a bucket without `window` or
// `rate`, a `rate` on a window algorithm, a `timeZone` without a `period`, `rules` next to a top-level `limit`. An
// option that a shape does not take has a marker type (below) rather than `never`, so that tsc names the mistake
// ("Type 'number' is not assignable to type 'RateNeedsABucket'").
import type { AlgorithmName } from '../algorithms'
import type { CalendarPeriodName } from '../calendar'
import type { Store } from '../store/store'
import type { Duration } from '../util/duration'
import type { EventKeys } from '../util/key-hash'
import type { Logger } from '../util/logger'

/**
 * The bucket algorithms, whose capacity refills (or drains) at a rate: `limit / window`, or `rate` per second.
 *
 * @example
 * const algorithm: BucketAlgorithmName = 'token-bucket'
 */
export type BucketAlgorithmName = 'token-bucket' | 'leaky-bucket'

/** `rate` is a bucket's refill (or drain) per second: it needs `algorithm: 'token-bucket'` or `'leaky-bucket'`. */
export interface RateNeedsABucket {
  readonly 'rate needs algorithm token-bucket or leaky-bucket': never
}

/** `timeZone` is the calendar of a quota: it needs a `period`. */
export interface TimeZoneNeedsAPeriod {
  readonly 'timeZone needs a period': never
}

/** A quota (with `period`) counts per calendar day or month: it takes no `window` and no `rate`. */
export interface NotWithPeriod {
  readonly 'not with period': never
}

/** With `rules`, the options of a rule (`limit`, `window`, `rate`, `name`...) go inside each rule. */
export interface InsideEachRule {
  readonly 'goes inside each rule when rules is given': never
}

/** One limiter has either the options of one rule or `rules`, not both. */
export interface NotWithRules {
  readonly 'not with rules: give limit and window inside each rule': never
}

interface RuleCommonOptions<Limit> {
  /** Names the rule in decisions, headers and store keys. Required when a limiter has several rules. */
  name?: string
  /** L: units admitted per window; for buckets the capacity B. A positive whole number. */
  limit: Limit
  /**
   * After this rule rejects a key, refuse that key for this long (`'15m'`), whatever it would admit meanwhile:
   * a lockout. Requests during the block do not extend it; `reset(key)` lifts it. Default: no block.
   */
  block?: Duration
}

/**
 * A bucket rule in `rules` that takes its algorithm from the limiter's (`algorithm: 'token-bucket'` beside
 * `rules`) and gives a `rate`.
 *
 * @example
 * createLimiter({ algorithm: 'token-bucket', rules: [{ name: 'user', limit: 10, rate: 1 }] })
 */
export interface InheritedBucketRuleOptions<Limit = number> extends RuleCommonOptions<Limit> {
  algorithm?: never
  rate: number
  window?: Duration
  period?: never
  timeZone?: TimeZoneNeedsAPeriod
}

/**
 * A rule of `limit` per `window`, by any algorithm: a window algorithm counts `limit` per `window`, a bucket of
 * capacity `limit` refills (or drains) in `window`. `Limit` and `Window` are what the HTTP adapters widen to
 * functions of the request (plans).
 *
 * @example
 * const login: WindowRuleOptions = { name: 'login', algorithm: 'sliding-log', limit: 5, window: '15m' }
 */
export interface WindowRuleOptions<Limit = number, Window = Duration> extends RuleCommonOptions<Limit> {
  /** Default `'sliding-window'` (or, in `rules`, the limiter's `algorithm`). */
  algorithm?: AlgorithmName
  /**
   * W: milliseconds or a duration string (`'500ms'`, `'10s'`, `'1m'`, `'1h'`, `'1d'`). A bucket refills (or drains)
   * at limit / window.
   */
  window: Window
  rate?: RateNeedsABucket
  period?: never
  timeZone?: TimeZoneNeedsAPeriod
}

/**
 * A token or leaky bucket of capacity `limit` that refills (or drains) at `rate` tokens per second.
 *
 * @example
 * const sms: RateBucketRuleOptions = { algorithm: 'leaky-bucket', limit: 10, rate: 0.5 }
 */
export interface RateBucketRuleOptions<Limit = number> extends RuleCommonOptions<Limit> {
  algorithm: BucketAlgorithmName
  /** r, tokens per second: the window becomes limit / r. */
  rate: number
  /** Overridden by `rate`. */
  window?: Duration
  period?: never
  timeZone?: TimeZoneNeedsAPeriod
}

/**
 * A quota: `limit` per calendar `'day'` or `'month'` of `timeZone`, a fixed window whose boundaries are the local
 * midnights (so a DST day lasts 23 or 25 hours).
 *
 * @example
 * const daily: QuotaRuleOptions = { name: 'daily', limit: 1000, period: 'day', timeZone: 'Europe/Paris' }
 */
export interface QuotaRuleOptions<Limit = number> extends RuleCommonOptions<Limit> {
  /** A quota is a fixed window on the calendar: leave it out, or `'fixed-window'`. */
  algorithm?: 'fixed-window'
  period: CalendarPeriodName
  /** The IANA time zone whose calendar the period follows. Default `'UTC'`. */
  timeZone?: string
  window?: NotWithPeriod
  rate?: NotWithPeriod
}

/**
 * One limit: how many units per window (or per calendar period), by which algorithm. Each algorithm has its own
 * shape, so a missing `window` or a `rate` on a window algorithm is a compile error.
 *
 * @example
 * const rule: RuleOptions = { name: 'login', algorithm: 'sliding-log', limit: 5, window: '15m' }
 */
export type RuleOptions = QuotaRuleOptions | RateBucketRuleOptions | WindowRuleOptions

/**
 * What every limiter takes besides its rules.
 *
 * @example
 * const shared: LimiterCommonOptions = { store: new MemoryStore(), prefix: 'api' }
 */
export interface LimiterCommonOptions {
  /** Where state lives. Default: a new `MemoryStore`. */
  store?: Store
  /** Put before every store key. Default `'sluice'`. */
  prefix?: string
  /**
   * What its events on `sluice:decision` and `sluice:store` call this limiter (their `limiter` field), so that
   * metrics tell limiters apart when their rules share names. Default: the `prefix`.
   */
  label?: string
  /** The cost of a request when `consume` is given none. Default 1. */
  cost?: number
  /**
   * Where Sluice reports what a developer should know: another limiter already counting in the same keys of the
   * store (and, over HTTP, an untrusted X-Forwarded-For and store outages). Default `console`.
   */
  logger?: Logger
  /**
   * What its events on the `sluice:decision` and `sluice:store` diagnostics channels say of keys: `'hash'` (default),
   * a SHA-256 prefix, or `'raw'`, the key itself too (see `EventKeys`).
   */
  eventKeys?: EventKeys
}

/** The single-rule options a limiter with `rules` does not take. */
interface NoSingleRule {
  limit?: InsideEachRule
  window?: InsideEachRule
  rate?: InsideEachRule
  period?: InsideEachRule
  timeZone?: InsideEachRule
  block?: InsideEachRule
  name?: InsideEachRule
}

/**
 * Stacked limits: a request must pass every rule, and is charged to all or to none.
 *
 * @example
 * const options: StackedLimiterOptions = { rules: [
 *   { name: 'user', limit: 100, window: '1m' },
 *   { name: 'global', algorithm: 'token-bucket', limit: 400, window: '1s' },
 * ] }
 */
export interface StackedLimiterOptions extends LimiterCommonOptions, NoSingleRule {
  /** The algorithm of each rule that names none. Default `'sliding-window'`. */
  algorithm?: AlgorithmName
  rules: readonly RuleOptions[]
}

/**
 * Stacked limits whose rules are buckets unless they say otherwise.
 *
 * @example
 * const options: StackedBucketLimiterOptions = { algorithm: 'token-bucket', rules: [
 *   { name: 'user', limit: 10, rate: 1 },
 *   { name: 'tenant', limit: 200, window: '1m' },
 * ] }
 */
export interface StackedBucketLimiterOptions extends LimiterCommonOptions, NoSingleRule {
  algorithm: BucketAlgorithmName
  rules: readonly (RuleOptions | InheritedBucketRuleOptions)[]
}

/**
 * A limiter of one quota.
 *
 * @example
 * const options: QuotaLimiterOptions = { limit: 1000, period: 'month', timeZone: 'America/New_York' }
 */
export interface QuotaLimiterOptions extends LimiterCommonOptions, QuotaRuleOptions {
  rules?: NotWithRules
}

/**
 * A limiter of one bucket that refills at `rate` per second.
 *
 * @example
 * const options: RateBucketLimiterOptions = { algorithm: 'leaky-bucket', limit: 10, rate: 0.5 }
 */
export interface RateBucketLimiterOptions extends LimiterCommonOptions, RateBucketRuleOptions {
  rules?: NotWithRules
}

/**
 * A limiter of one rule of `limit` per `window`, by any algorithm.
 *
 * @example
 * const options: WindowLimiterOptions = { limit: 100, window: '1m' }
 */
export interface WindowLimiterOptions extends LimiterCommonOptions, WindowRuleOptions {
  rules?: NotWithRules
}

/**
 * Options of `createLimiter`: one rule given inline (a window, a bucket or a quota), or several in `rules`.
 * (The window shape is last on purpose: tsc reports a mistake that fits no shape against the last one, and a
 * missing `window` is the likeliest.)
 *
 * @example
 * const options: LimiterOptions = { algorithm: 'token-bucket', limit: 20, window: '10s' }
 */
export type LimiterOptions =
  | StackedLimiterOptions
  | StackedBucketLimiterOptions
  | QuotaLimiterOptions
  | RateBucketLimiterOptions
  | WindowLimiterOptions
