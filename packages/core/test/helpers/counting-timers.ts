import type { Timers } from '@sluice/core'
import type { VirtualTime } from '../../../../examples/overload/virtual-time'

/** Timers on virtual time that count the timers set, for tests that pin how many a component keeps pending. */
export function countingTimers(time: VirtualTime): { readonly timers: Timers; readonly timersSet: () => number } {
  let set = 0
  const timers: Timers = {
    now: () => time.now(),
    setTimeout: (callback: () => void, delayMs: number) => {
      set++
      return time.setTimeout(callback, delayMs)
    },
    clearTimeout: (handle: unknown) => time.clearTimeout(handle),
  }
  return { timers, timersSet: () => set }
}
