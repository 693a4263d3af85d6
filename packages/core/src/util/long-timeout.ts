import { unrefTimer } from '../runtime/builtins'

/**
 * The longest delay one Node timer holds: a signed 32-bit count of milliseconds, about 24.8 days. A longer delay
 * fires after 1 ms instead (with a TimeoutOverflowWarning), so a timer re-armed for it becomes a 1 ms loop.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * A timer for a delay longer than {@link MAX_TIMER_MS}: a chain of unref'd timers, each at most that long, the last
 * of which runs the callback.
 *
 * @example
 * const timer = new LongTimeout(() => renew(), 30 * 86_400_000)
 * timer.clear()
 */
export class LongTimeout {
  private timer: ReturnType<typeof setTimeout>

  constructor(
    private readonly callback: () => void,
    private leftMs: number,
  ) {
    this.timer = this.arm()
  }

  clear(): void {
    clearTimeout(this.timer)
  }

  private arm(): ReturnType<typeof setTimeout> {
    const legMs = Math.min(this.leftMs, MAX_TIMER_MS)
    this.leftMs -= legMs
    const timer = setTimeout(() => {
      if (this.leftMs > 0) this.timer = this.arm()
      else this.callback()
    }, legMs)
    unrefTimer(timer)
    return timer
  }
}
