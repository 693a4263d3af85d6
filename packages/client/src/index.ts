export {
  type AdaptiveThrottle,
  type AdaptiveThrottleCounters,
  type AdaptiveThrottleOptions,
  createAdaptiveThrottle,
} from './adaptive-throttle'
export { type BackoffOptions, backoffDelayMs, type Jitter } from './backoff'
export {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitState,
  circuitBreaker,
} from './circuit-breaker'
export {
  CircuitOpenError,
  type ClientErrorCode,
  ClientOptionError,
  RetryBudgetExhaustedError,
  ThrottledError,
  type WaitSource,
  WaitTooLongError,
} from './errors'
export type { FetchLike, PoliteFetchOptions, RetryEvent } from './options'
export { createPoliteFetch, politeFetch } from './polite-fetch'
export {
  type HeaderSource,
  type ParseRateLimitOptions,
  parseRateLimitHeaders,
  type RateLimitFormat,
  type RateLimitInfo,
  type RateLimitQuota,
} from './rate-limit-headers'
export {
  createRetryBudget,
  type RetryBudget,
  type RetryBudgetCounters,
  type RetryBudgetOptions,
} from './retry-budget'
export type { Sleep } from './sleep'
export type { KeyCount, TargetKey } from './sliding-window'
