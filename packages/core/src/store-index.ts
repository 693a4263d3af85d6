// @sluice/core/store: what a store author (and a sibling package such as @sluice/redis) needs to implement a Store
// that decides exactly as MemoryStore does. Applications import from @sluice/core.
export * from './algorithms'
export { type CalendarPeriod, type CalendarPeriodName, compileCalendarPeriod, type PeriodBounds } from './calendar'
export { checkBoolean, checkFunction, checkObject, checkOneOf, checkTimerMs, checkWholeNumber, isCost } from './checks'
export { type Decision, decisionOf, type RuleDecision, ruleDecision } from './decision'
export { parseDuration } from './duration'
export { describe as describeValue, InvalidOptionError, StoreKeyError, StoreUnavailableError } from './errors'
export type { DecisionSource, DecisionTrace, EventKeys, StoreEvent } from './event-types'
export { keyHash } from './key-hash'
export { checkLogger, type Logger } from './logger'
export { longKeyDigest, MAX_KEPT_KEY_LENGTH } from './long-keys'
export { ceilDiv, floorDiv } from './math'
export { MemoryStore, type MemoryStoreOptions } from './memory-store'
export {
  acquireLeases,
  type LeaseOutcome,
  type LeaseScope,
  type LeaseStore,
  type LeaseTable,
  MemoryLeaseStore,
  renewLeases,
} from './protect'
export type { CompiledRule } from './rules'
export {
  type BindOptions,
  type BoundStore,
  committed,
  evaluateRules,
  type FailurePolicy,
  KeySpaces,
  type Outcome,
  type Store,
} from './store'
