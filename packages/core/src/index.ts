// @sluice/core: what an application calls. What a store (or a sibling package) needs is in @sluice/core/store.
export * from './algorithms'
export type { CalendarPeriod, CalendarPeriodName, PeriodBounds } from './calendar'
export type { Decision, RuleDecision } from './decision'
export { type Duration, type DurationUnit, parseDuration } from './duration'
export { describe as describeValue, InvalidOptionError, StoreKeyError, StoreUnavailableError } from './errors'
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
export * from './http'
export { createLimiter, type Limiter, type LimiterOptions, RateLimitError, type RuleLimits } from './limiter'
export type { Logger } from './logger'
export { ceilDiv, floorDiv } from './math'
export { MemoryStore, type MemoryStoreOptions } from './memory-store'
export * from './protect'
export type { CompiledRule, RuleOptions } from './rules'
// The rest of a store author's kit (BoundStore, decisionOf, KeySpaces...) is in @sluice/core/store.
export { committed, evaluateRules, type FailurePolicy, type Outcome, type Store } from './store'
