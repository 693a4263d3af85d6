import { checkDuration, checkObject, checkOptionNames, checkWholeNumber } from '../util/checks'
import type { Duration } from '../util/duration'
import { describe, InvalidOptionError } from '../util/errors'
import { AdaptiveLimit, type AdaptiveLimitOptions } from './adaptive-limit'
import { ControlledDelay } from './controlled-delay'
import { EventLoopDelay } from './event-loop-delay'
import { type Shedder, ShedderCore } from './shedder-core'
import { checkTimers, realTimers, type Timers } from './timers'

/**
 * Options of {@link createShedder} (and of the adapters' `shedLoad`).
 *
 * @example
 * const options: ShedderOptions = { maxInFlight: 64, queue: 128, maxWait: '2s', maxEventLoopDelay: '200ms' }
 */
export interface ShedderOptions {
  /** The most requests in flight at once on this instance (Little's law: throughput x service time). Required. */
  maxInFlight: number
  /** How many requests may wait for a slot. Default `maxInFlight`; 0 sheds whatever finds the slots taken. */
  queue?: number
  /** The longest a request may wait; it never starts later. Default `'1s'`; required when `queue` is given. */
  maxWait?: Duration
  /** The longest wait in a standing queue (one that has not emptied for `queueInterval`). Default `'5ms'`. */
  queueTarget?: Duration
  /** How long the line must stay non-empty to count as a standing queue. Default `'100ms'`. */
  queueInterval?: Duration
  /** `'fifo'` (default) or `'adaptive-lifo'`: newest first while the queue is standing, first come otherwise. */
  queueOrder?: QueueOrder
  /** Also shed (all but critical requests) while the event loop lags more than this. Default: off. */
  maxEventLoopDelay?: Duration
  /** Let the ceiling follow measured latency, up to `maxInFlight` (see {@link AdaptiveLimit}). Default false. */
  adaptive?: boolean | AdaptiveLimitOptions
  /** The Retry-After of a shed request. Default `'1s'`. */
  retryAfter?: Duration
  /** The clock and timers; a simulation injects its own. Default: `performance.now()` and unref'd timers. */
  timers?: Timers
}

/**
 * The order of the waiting line within a priority and tenant share.
 *
 * @example
 * const order: QueueOrder = 'adaptive-lifo'
 */
export type QueueOrder = 'fifo' | 'adaptive-lifo'

const OPTIONS = [
  'maxInFlight',
  'queue',
  'maxWait',
  'queueTarget',
  'queueInterval',
  'queueOrder',
  'maxEventLoopDelay',
  'adaptive',
  'retryAfter',
  'timers',
]
// Names from @fastify/under-pressure and similar tools, so a migration mistake gets a pointer.
const RENAMED: Readonly<Record<string, string>> = {
  maxConcurrency: 'maxInFlight',
  concurrency: 'maxInFlight',
  maxQueue: 'queue',
  queueSize: 'queue',
  timeout: 'maxWait',
  retryAfterMs: 'retryAfter',
}
/**
 * Builds a load shedder for one instance. Invalid options throw an {@link InvalidOptionError} naming the option.
 *
 * @example
 * const shedder = createShedder({ maxInFlight: 64, queue: 128, maxWait: '2s' })
 * const ticket = shedder.admit({ priority: 'normal', tenant: 'acme' })
 * if (ticket.state === 'waiting') await ticket.decided()
 * if (ticket.state !== 'running') return reply503(ticket.retryAfterMs)
 * try { await handle() } finally { ticket.release() }
 */
export function createShedder(options: ShedderOptions): Shedder {
  checkObject(options, 'options')
  checkOptionNames(options, OPTIONS, 'shedLoad', RENAMED)
  const maxInFlight = checkWholeNumber(options.maxInFlight, 'maxInFlight')
  if (options.queue !== undefined && (options.queue as unknown) !== 0 && options.maxWait === undefined) {
    throw new InvalidOptionError('maxWait', 'is required when `queue` is given: say how long a request may wait')
  }
  const queue = checkWholeNumber(options.queue ?? maxInFlight, 'queue', { min: 0 })
  const maxWaitMs = checkDuration(options.maxWait, 'maxWait', '1s')
  const delay = new ControlledDelay(
    checkDuration(options.queueTarget, 'queueTarget', '5ms'),
    checkDuration(options.queueInterval, 'queueInterval', '100ms'),
  )
  const order = options.queueOrder ?? 'fifo'
  if (order !== 'fifo' && order !== 'adaptive-lifo') {
    throw new InvalidOptionError('queueOrder', `must be 'fifo' or 'adaptive-lifo' (got ${describe(order)})`)
  }
  checkTimers(options.timers)
  const timers = options.timers ?? realTimers
  // `??` has already made a null `adaptive` false (off, the default).
  const adaptive = options.adaptive ?? false
  if (typeof adaptive !== 'boolean' && typeof adaptive !== 'object') {
    throw new InvalidOptionError('adaptive', `must be true, false or an object (got ${describe(adaptive)})`)
  }
  const lag =
    options.maxEventLoopDelay === undefined
      ? undefined
      : {
          signal: new EventLoopDelay({ timers }),
          maxMs: checkDuration(options.maxEventLoopDelay, 'maxEventLoopDelay'),
        }
  return new ShedderCore({
    maxInFlight,
    queue,
    maxWaitMs,
    delay,
    newestFirst: order === 'adaptive-lifo',
    retryAfterMs: checkDuration(options.retryAfter, 'retryAfter', '1s'),
    timers,
    adaptive: adaptive === false ? undefined : new AdaptiveLimit(adaptive, maxInFlight),
    lag,
  })
}
