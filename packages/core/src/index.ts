// @sluice/core: what an application calls. What a store author needs is in @sluice/core/store; what the adapters
// share (the HTTP policy, the verdict writers) is in @sluice/core/internal. test/exports.test.ts pins this list.
export type { AlgorithmName } from './algorithms'
export type { CalendarPeriodName } from './calendar'
export type { Decision, RuleDecision } from './decision'
export { type Duration, type DurationUnit, parseDuration } from './duration'
export { InvalidOptionError, type SluiceErrorCode, StoreKeyError, StoreUnavailableError } from './errors'
export type {
  DecisionEvent,
  DecisionSource,
  EventKeys,
  RuleDecisionEvent,
  StoreEvent,
  StoreFallbackEvent,
  StoreOutageEvent,
  StoreRecoveredEvent,
  StoreRequestFailedEvent,
} from './event-types'
export { keyHash } from './events'
export type {
  AddressListOption,
  HeaderMode,
  HeadersOption,
  HttpCommonOptions,
  HttpLimitOptions,
  HttpQuotaLimitOptions,
  HttpRateBucketLimitOptions,
  HttpRuleDefaults,
  HttpRuleOptions,
  HttpStackedBucketLimitOptions,
  HttpStackedLimitOptions,
  HttpWindowLimitOptions,
  IpKeyOptions,
  KeyFunction,
  RateLimitHandle,
  RequestLimit,
  RequestWindow,
  RuleKey,
} from './http'
export { createLimiter, type Limiter, RateLimitError, type RuleLimits } from './limiter'
export type { Logger } from './logger'
export { MemoryStore, type MemoryStoreOptions } from './memory-store'
export type {
  BucketAlgorithmName,
  InheritedBucketRuleOptions,
  InsideEachRule,
  LimiterCommonOptions,
  LimiterOptions,
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
export {
  type AdaptiveLimitOptions,
  type AdmissionRequest,
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
  createConcurrencyLimiter,
  createShedder,
  type HttpConcurrencyOptions,
  type HttpShedOptions,
  MemoryLeaseStore,
  PRIORITIES,
  type Priority,
  type QueueOrder,
  type Shedder,
  type ShedderOptions,
  type ShedEvent,
  type ShedReason,
  type Slot,
  type Ticket,
  type Timers,
} from './protect'
export type { CompiledRule } from './rules'
export type { FailurePolicy, Store } from './store'
