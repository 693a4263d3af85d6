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
export {
  type AdmissionRequest,
  createShedder,
  type QueueOrder,
  type Shedder,
  type ShedderOptions,
  type ShedReason,
  type Ticket,
} from './shedder'
export { realTimers, type Timers } from './timers'
