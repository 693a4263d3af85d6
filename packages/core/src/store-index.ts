// @sluice/core/store: what a store author (and a sibling package such as @sluice/redis) needs to implement a Store
// that decides exactly as MemoryStore does, or a LeaseStore that counts as MemoryLeaseStore does. Applications import
// from @sluice/core. The packages' README "Writing a store" documents this list, group by group.

// Deciding as MemoryStore does: every algorithm and its refund, all rules at one instant, all or nothing.
export { algorithms, isBucket, refunds, type Step } from './algorithms'
// The contract: what a limiter binds, what it hands a store, and what a store answers.
export type { CalendarPeriod } from './calendar'
export type { StoreEvent } from './events/event-types'
// The stores of the core, to delegate to (RedisStore's local fallback) or to mirror, and the lease algorithms.
export {
  acquireLeases,
  type LeaseOutcome,
  type LeaseScope,
  type LeaseStore,
  type LeaseTable,
  MemoryLeaseStore,
  renewLeases,
} from './protect'
export { type Decision, decisionOf, type Outcome } from './rules/decision'
export type { CompiledRule } from './rules/rules'
export { committed, evaluateRules } from './store/evaluate-rules'
// Keys: the shared-counts warning, what a long key is kept by, how a key is shown.
export { KeySpaces } from './store/key-spaces'
export { longKeyDigest, MAX_KEPT_KEY_LENGTH } from './store/long-keys'
export { MemoryStore } from './store/memory-store'
export type { BindOptions, BoundStore, DecisionTrace, FailurePolicy, Store } from './store/store'
// The options a store takes are checked as the core checks its own; what a store throws, and how it warns.
export {
  checkBoolean,
  checkFunction,
  checkObject,
  checkOneOf,
  checkTimerMs,
  checkWholeNumber,
} from './util/checks'
export { warnEach } from './util/diagnostics'
export { describe as describeValue, InvalidOptionError, StoreKeyError, StoreUnavailableError } from './util/errors'
export type { EventKeys } from './util/key-hash'
export { keyHash } from './util/key-hash'
export type { Logger } from './util/logger'
export { checkLogger } from './util/logger'
export { floorDiv } from './util/math'
