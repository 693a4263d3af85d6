// @sluice/core/store: what a store author (and a sibling package such as @sluice/redis) needs to implement a Store
// that decides exactly as MemoryStore does. Applications import from @sluice/core.
export * from './algorithms'
export { type CalendarPeriod, type CalendarPeriodName, compileCalendarPeriod, type PeriodBounds } from './calendar'
export type { StoreEvent } from './events/event-types'
export {
  acquireLeases,
  type LeaseOutcome,
  type LeaseScope,
  type LeaseStore,
  type LeaseTable,
  MemoryLeaseStore,
  renewLeases,
} from './protect'
export { type Decision, decisionOf, type Outcome, type RuleDecision, ruleDecision } from './rules/decision'
export type { CompiledRule } from './rules/rules'
export { committed, evaluateRules } from './store/evaluate-rules'
export { KeySpaces } from './store/key-spaces'
export { longKeyDigest, MAX_KEPT_KEY_LENGTH } from './store/long-keys'
export { MemoryStore, type MemoryStoreOptions } from './store/memory-store'
export type {
  BindOptions,
  BoundStore,
  DecisionSource,
  DecisionTrace,
  FailurePolicy,
  Store,
} from './store/store'
export {
  checkBoolean,
  checkFunction,
  checkObject,
  checkOneOf,
  checkTimerMs,
  checkWholeNumber,
  isCost,
} from './util/checks'
export {
  DIAGNOSTICS,
  Diagnostic,
  type DiagnosticCode,
  warnEach,
  warnOnce,
} from './util/diagnostics'
export { parseDuration } from './util/duration'
export { describe as describeValue, InvalidOptionError, StoreKeyError, StoreUnavailableError } from './util/errors'
export { type EventKeys, keyHash } from './util/key-hash'
export { checkLogger, type Logger } from './util/logger'
export { ceilDiv, floorDiv } from './util/math'
