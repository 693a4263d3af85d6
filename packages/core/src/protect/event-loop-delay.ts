import type { IntervalHistogram } from 'node:perf_hooks'
import { nodeBuiltin, unrefTimer } from '../runtime/builtins'
import { realTimers, type Timers } from './timers'

/** How often the monitor's own timer fires while it runs (its lateness is the event-loop delay). */
const RESOLUTION_MS = 20
/** Each reading is the mean delay over the last window this long. */
const WINDOW_MS = 250
/** Without a reading for this long, the monitor stops: an idle process is not woken 50 times a second. */
const IDLE_AFTER_MS = 1000

/** The parts of a perf_hooks histogram the signal uses (a test passes its own). */
export type DelayHistogram = Pick<IntervalHistogram, 'enable' | 'disable' | 'reset' | 'count' | 'mean'>

/**
 * Options of {@link EventLoopDelay}, for tests.
 *
 * @example
 * new EventLoopDelay({ timers: virtualTimers, histogram: () => fakeHistogram })
 */
export interface EventLoopDelayOptions {
  timers?: Timers
  histogram?: (resolutionMs: number) => DelayHistogram
}

/**
 * The event-loop delay of this process, from `perf_hooks.monitorEventLoopDelay`: the mean lateness of a timer that
 * should fire every 20 ms, over the last complete 250 ms window (not a lifetime average: each window starts from a
 * reset histogram). Never NaN or Infinity: a window without samples reads 0, or, if it is long, the time the loop
 * held the timer back.
 *
 * The monitor runs only while someone reads: the first reading starts it, and after a second without readings it
 * stops, so an idle service wakes for it once, not 50 times a second.
 *
 * @example
 * const lag = new EventLoopDelay()
 * if (lag.read(performance.now()) > 200) shed()
 */
export class EventLoopDelay {
  private readonly timers: Timers
  private readonly createHistogram: (resolutionMs: number) => DelayHistogram
  private histogram: DelayHistogram | undefined
  private running = false
  private windowStart = 0
  private lastReadAt = 0
  private valueMs = 0

  constructor(options: EventLoopDelayOptions = {}) {
    this.timers = options.timers ?? realTimers
    this.createHistogram = options.histogram ?? loopDelayHistogram
  }

  /** Whether the monitor is running now. */
  get active(): boolean {
    return this.running
  }

  /** The delay of the last complete window, in ms; starts the monitor if it is not running. */
  read(now: number): number {
    this.lastReadAt = now
    if (!this.running) {
      this.start(now)
      return 0
    }
    if (now - this.windowStart >= WINDOW_MS) {
      const histogram = this.histogram as DelayHistogram
      this.valueMs = windowDelayMs(histogram, now - this.windowStart)
      histogram.reset()
      this.windowStart = now
    }
    return this.valueMs
  }

  /** Stops the monitor now (it starts again at the next reading). */
  stop(): void {
    if (!this.running) return
    this.running = false
    this.valueMs = 0
    this.histogram?.disable()
  }

  private start(now: number): void {
    this.histogram ??= this.createHistogram(RESOLUTION_MS)
    this.histogram.reset()
    this.histogram.enable()
    this.running = true
    this.windowStart = now
    this.valueMs = 0
    this.checkIdleLater()
  }

  /** Stops the monitor `IDLE_AFTER_MS` after the last reading: the check is set for then, and moved on if read since. */
  private checkIdleLater(delayMs = IDLE_AFTER_MS): void {
    this.timers.setTimeout(() => {
      if (!this.running) return
      const idleMs = this.timers.now() - this.lastReadAt
      if (idleMs >= IDLE_AFTER_MS) this.stop()
      else this.checkIdleLater(IDLE_AFTER_MS - idleMs)
    }, delayMs)
  }
}

/** The mean delay of one window: the histogram records each firing's interval, the resolution included. */
function windowDelayMs(histogram: DelayHistogram, windowMs: number): number {
  if (histogram.count === 0) {
    // The timer never fired in a whole window (at least WINDOW_MS): the loop was held for about that long.
    return windowMs - RESOLUTION_MS
  }
  const delayMs = histogram.mean / 1e6 - RESOLUTION_MS
  return Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0
}

type PerfHooks = Pick<typeof import('node:perf_hooks'), 'monitorEventLoopDelay'>

/** Node's event-loop delay histogram, or, where the runtime has no `perf_hooks`, one kept by a timer of its own. */
function loopDelayHistogram(resolutionMs: number): DelayHistogram {
  const perfHooks = nodeBuiltin<PerfHooks>('node:perf_hooks')
  if (perfHooks !== undefined) return perfHooks.monitorEventLoopDelay({ resolution: resolutionMs })
  return new TimerHistogram(resolutionMs)
}

/**
 * What `monitorEventLoopDelay` records, measured the same way: a timer set to fire every `resolutionMs`, and the
 * time between its firings, in nanoseconds.
 */
class TimerHistogram implements DelayHistogram {
  count = 0
  private totalNs = 0
  private lastAt = 0
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(private readonly resolutionMs: number) {}

  get mean(): number {
    return this.count === 0 ? Number.NaN : this.totalNs / this.count
  }

  enable(): boolean {
    if (this.timer !== undefined) return false
    this.lastAt = performance.now()
    this.timer = setInterval(() => {
      const now = performance.now()
      this.totalNs += (now - this.lastAt) * 1e6
      this.count++
      this.lastAt = now
    }, this.resolutionMs)
    unrefTimer(this.timer)
    return true
  }

  disable(): boolean {
    if (this.timer === undefined) return false
    clearInterval(this.timer)
    this.timer = undefined
    return true
  }

  reset(): void {
    this.count = 0
    this.totalNs = 0
  }
}
