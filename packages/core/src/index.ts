// @sluice/core: what an application calls. What a store (or a sibling package) needs is in @sluice/core/store.
export * from './algorithms'
export type { CalendarPeriod, CalendarPeriodName, PeriodBounds } from './calendar'
export type { Decision, RuleDecision } from './decision'
export { type Duration, type DurationUnit, parseDuration } from './duration'
export { describe as describeValue, InvalidOptionError, StoreKeyError, StoreUnavailableError } from './errors'
export * from './http'
export { createLimiter, type Limiter, type LimiterOptions, RateLimitError, type RuleLimits } from './limiter'
export type { Logger } from './logger'
export { ceilDiv, floorDiv } from './math'
export { MemoryStore, type MemoryStoreOptions } from './memory-store'
export type {
  BucketAlgorithmName,
  InheritedBucketRuleOptions,
  InsideEachRule,
  LimiterCommonOptions,
  NotWithPeriod,
  NotWithRules,
  QuotaLimiterOptions,
  QuotaRuleOptions,
  RateBucketLimiterOptions,
  RateBucketRuleOptions,
  RateNeedsABucket,
  RuleOptions,
  StackedBucketLimiterOptions,
  StackedLimiterOptions,
  TimeZoneNeedsAPeriod,
  WindowLimiterOptions,
  WindowRuleOptions,
} from './options'
export * from './protect'
export type { CompiledRule } from './rules'
// The rest of a store author's kit (BoundStore, decisionOf, KeySpaces...) is in @sluice/core/store.
export { committed, evaluateRules, type FailurePolicy, type Outcome, type Store } from './store'
