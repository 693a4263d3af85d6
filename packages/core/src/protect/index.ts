export type { AdaptiveLimitOptions } from './adaptive-limit'
export {
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
  createConcurrencyLimiter,
  type Slot,
} from './concurrency'
export {
  acquireLeases,
  type LeaseOutcome,
  type LeaseScope,
  type LeaseStore,
  type LeaseTable,
  MemoryLeaseStore,
  renewLeases,
} from './lease-table'
export { PRIORITIES, type Priority } from './priority'
export { createShedder, type QueueOrder, type ShedderOptions } from './shedder'
export type { AdmissionRequest, Shedder, ShedReason, Ticket } from './shedder-core'
export { realTimers, type Timers } from './timers'
