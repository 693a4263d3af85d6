import { checkDuration, checkObject, checkOptionNames, checkWholeNumber } from '../util/checks'
import type { Duration } from '../util/duration'
import { describe, InvalidOptionError } from '../util/errors'
import { AdaptiveLimit, type AdaptiveLimitOptions } from './adaptive-limit'
import { ControlledDelay } from './controlled-delay'
import { EventLoopDelay } from './event-loop-delay'
import type { Priority } from './priority'
import { ShedderCore } from './shedder-core'
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

/**
 * Why a request was shed:
 * - `'overloaded'`: every slot is taken and the line is full (or there is none);
 * - `'evicted'`: it was waiting, and a more important request (or one of a tenant further below its share) took its
 *   place in the full line;
 * - `'deadline'`: it waited `maxWait` without a slot;
 * - `'standing-queue'`: it waited longer than the standing-queue bound;
 * - `'event-loop'`: the event loop lags more than `maxEventLoopDelay`.
 *
 * @example
 * if (ticket.state === 'shed' && ticket.reason === 'deadline') metrics.increment('shed.deadline')
 */
export type ShedReason = 'overloaded' | 'evicted' | 'deadline' | 'standing-queue' | 'event-loop'

/**
 * What one request asks of the shedder.
 *
 * @example
 * shedder.admit({ priority: 'sheddable', tenant: 'acme' })
 */
export interface AdmissionRequest {
  /** Default `'normal'`. */
  priority?: Priority
  /** Who the request is for; tenants share the slots fairly. Default: one tenant for all. */
  tenant?: string
}

/**
 * One request's place: running, waiting for a slot, or shed. `release()` ends it either way, once.
 *
 * @example
 * const ticket = shedder.admit({ priority: 'normal' })
 * if (ticket.state === 'waiting') await ticket.decided()
 * if (ticket.state === 'running') try { await work() } finally { ticket.release() }
 */
export interface Ticket {
  readonly state: 'running' | 'waiting' | 'shed' | 'released'
  readonly priority: Priority
  readonly tenant: string
  /** Why it was shed (state `'shed'` only). */
  readonly reason: ShedReason | undefined
  /** How long a shed request should wait before trying again, in ms. */
  readonly retryAfterMs: number
  /** How long it waited in line, in ms (0 if it started at once). */
  readonly waitedMs: number
  /** Resolves once the request is no longer waiting (at once if it never was): started, shed or released. */
  decided(): Promise<Ticket>
  /**
   * Frees its slot (running), or leaves the line (waiting, for example because the client went away). Idempotent:
   * only the first call counts.
   */
  release(): void
}

/**
 * The load shedder of one instance: an in-flight ceiling, a bounded waiting line with deadlines, priorities, fair
 * shares among tenants, controlled delay and (optionally) the event-loop delay. The adapters' `shedLoad` calls it.
 *
 * @example
 * const shedder = createShedder({ maxInFlight: 64 })
 * const ticket = shedder.admit({ priority: 'critical' })
 */
export interface Shedder {
  /**
   * Decides at once (running or shed), or puts the request in line; `onDecided` hears when a waiter leaves it:
   * started (`'running'`), shed, or released while waiting (`'released'`).
   */
  admit(request?: AdmissionRequest, onDecided?: (ticket: Ticket) => void): Ticket
  /** Requests running now. */
  readonly inFlight: number
  /** Requests waiting now. */
  readonly waiting: number
  /** The ceiling now: `maxInFlight`, or the adaptive ceiling. */
  readonly limit: number
}

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
