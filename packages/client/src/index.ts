export { type BackoffOptions, backoffDelayMs, type Jitter } from './backoff'
export {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitState,
  circuitBreaker,
} from './circuit-breaker'
export { CircuitOpenError, ClientOptionError, type WaitSource, WaitTooLongError } from './errors'
export {
  createPoliteFetch,
  type FetchLike,
  type PoliteFetchOptions,
  politeFetch,
  type RetryEvent,
} from './polite-fetch'
export {
  type HeaderSource,
  type ParseRateLimitOptions,
  parseRateLimitHeaders,
  type RateLimitFormat,
  type RateLimitInfo,
  type RateLimitQuota,
} from './rate-limit-headers'
export type { Sleep } from './sleep'
