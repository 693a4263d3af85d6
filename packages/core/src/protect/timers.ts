import { unrefTimer } from '../runtime/builtins'
import { describe, InvalidOptionError } from '../util/errors'
import { LongTimeout, MAX_TIMER_MS } from '../util/long-timeout'

/**
 * The time source of the service-protection parts: a monotonic clock in milliseconds and one-shot timers. The
 * default is `performance.now()` and unref'd `setTimeout`; a simulation passes its own, so that the same shedder
 * the adapters run can be driven through hours of virtual traffic in a moment, deterministically.
 *
 * @example
 * let now = 0
 * const timers: Timers = { now: () => now, setTimeout: (fn, ms) => queue.push({ at: now + ms, fn }), clearTimeout: (t) => cancel(t) }
 */
export interface Timers {
  /** Milliseconds on a clock that never goes back. */
  now(): number
  /** Calls `callback` once, `delayMs` from now; the handle goes to `clearTimeout`. */
  setTimeout(callback: () => void, delayMs: number): unknown
  clearTimeout(handle: unknown): void
}

/**
 * Real time: `performance.now()`, and timers that never keep the process alive on their own. A delay longer than a
 * Node timer holds (24.8 days: a `maxWait: '30d'`, the renewal of a `lease: '90d'`) is a chain of timers, not one
 * that fires after 1 ms and is re-armed in a loop.
 */
export const realTimers: Timers = {
  now: () => performance.now(),
  setTimeout(callback, delayMs) {
    if (delayMs > MAX_TIMER_MS) return new LongTimeout(callback, delayMs)
    const timer = setTimeout(callback, delayMs)
    unrefTimer(timer)
    return timer
  },
  clearTimeout(handle) {
    if (handle instanceof LongTimeout) handle.clear()
    else clearTimeout(handle as ReturnType<typeof setTimeout>)
  },
}

/**
 * One timer, re-armed for whatever instant is next due: the shedder's deadlines all go through one of these, so a
 * line of a thousand waiters costs one pending timer, not a thousand.
 */
export class NextTimer {
  private handle: unknown
  private dueAt = Number.POSITIVE_INFINITY

  constructor(
    private readonly timers: Timers,
    private readonly fire: () => void,
  ) {}

  /** Arms the timer for `at` (ms on the timers' clock), or disarms it when `at` is Infinity. */
  schedule(at: number): void {
    if (at === this.dueAt) return
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle)
    this.handle = undefined
    this.dueAt = at
    if (at === Number.POSITIVE_INFINITY) return
    this.handle = this.timers.setTimeout(
      () => {
        this.handle = undefined
        this.dueAt = Number.POSITIVE_INFINITY
        this.fire()
      },
      Math.max(0, at - this.timers.now()),
    )
  }
}

/** An injected time source must have the three methods the parts call. */
export function checkTimers(value: unknown): void {
  if (value === undefined) return
  const timers = value as Partial<Timers> | null
  if (
    timers === null ||
    typeof timers !== 'object' ||
    typeof timers.now !== 'function' ||
    typeof timers.setTimeout !== 'function' ||
    typeof timers.clearTimeout !== 'function'
  ) {
    throw new InvalidOptionError('timers', `must have now(), setTimeout() and clearTimeout() (got ${describe(value)})`)
  }
}
