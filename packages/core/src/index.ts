export * from './algorithms'
export { type Duration, type DurationUnit, parseDuration } from './duration'
export { describe as describeValue, InvalidOptionError, StoreUnavailableError } from './errors'
export * from './http'
export {
  createLimiter,
  type Decision,
  type Limiter,
  type LimiterOptions,
  RateLimitError,
  type RuleDecision,
} from './limiter'
export { ceilDiv, floorDiv } from './math'
export { MemoryStore, type MemoryStoreOptions } from './memory-store'
export type { CompiledRule, RuleOptions } from './rules'
export { committed, evaluateRules, type Outcome, type Store } from './store'
