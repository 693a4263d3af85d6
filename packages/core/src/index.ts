// @sluice/core: what an application calls. What a store author needs is in @sluice/core/store; what the adapters
// share (the HTTP policy, the verdict writers) is in @sluice/core/internal. test/exports.test.ts pins this list.
export type { AlgorithmName } from './algorithms'
export type { CalendarPeriodName } from './calendar'
export type {
  DecisionEvent,
  RuleDecisionEvent,
  StoreEvent,
  StoreFallbackEvent,
  StoreOutageEvent,
  StoreRecoveredEvent,
  StoreRequestFailedEvent,
} from './events/event-types'
export type {
  AddressListOption,
  HeaderMode,
  HeadersOption,
  HttpCommonOptions,
  HttpConcurrencyOptions,
  HttpLimitOptions,
  HttpQuotaLimitOptions,
  HttpRateBucketLimitOptions,
  HttpRuleDefaults,
  HttpRuleOptions,
  HttpShedOptions,
  HttpStackedBucketLimitOptions,
  HttpStackedLimitOptions,
  HttpWindowLimitOptions,
  IpKeyOptions,
  KeyFunction,
  RateLimitHandle,
  RequestLimit,
  RequestWindow,
  RuleKey,
  ShedEvent,
} from './http'
export { createLimiter, type Limiter, RateLimitError, type RuleLimits } from './limiter/limiter'
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
} from './limiter/options'
export {
  type AdaptiveLimitOptions,
  type AdmissionRequest,
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
  createConcurrencyLimiter,
  createShedder,
  MemoryLeaseStore,
  PRIORITIES,
  type Priority,
  type QueueOrder,
  type Shedder,
  type ShedderOptions,
  type ShedReason,
  type Slot,
  type Ticket,
  type Timers,
} from './protect'
export type { Decision, RuleDecision } from './rules/decision'
export type { CompiledRule } from './rules/rules'
export { MemoryStore, type MemoryStoreOptions } from './store/memory-store'
export type { DecisionSource, FailurePolicy, Store } from './store/store'
export type { Diagnostic, DiagnosticCode } from './util/diagnostics'
export { type Duration, type DurationUnit, parseDuration } from './util/duration'
export { InvalidOptionError, type SluiceErrorCode, StoreKeyError, StoreUnavailableError } from './util/errors'
export { type EventKeys, keyHash } from './util/key-hash'
export type { Logger } from './util/logger'
