/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. Injectable in {@link PoliteFetchOptions}. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>

// setTimeout holds a delay in a signed 32-bit integer: a longer one fires after 1 ms (Node warns, browsers do not).
const LONGEST_TIMER_MS = 2 ** 31 - 1

/**
 * A `setTimeout` wait whose timer is cleared on abort, so an aborted wait holds nothing open. A wait longer than a
 * timer can hold (24.8 days) is made of several timers, one after the other.
 */
export const timerSleep: Sleep = function timerSleep(ms, signal) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    let remainingMs = ms
    let timer: ReturnType<typeof setTimeout>
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const arm = () => {
      const legMs = Math.min(remainingMs, LONGEST_TIMER_MS)
      remainingMs -= legMs
      timer = setTimeout(() => {
        if (remainingMs > 0) return arm()
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }, legMs)
    }
    arm()
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Runs an injected sleep but rejects with the signal's reason the moment it aborts, whether or not that sleep
 * watches the signal itself: a caller who cancels must not wait for someone else's timer.
 */
export function sleepUnlessAborted(sleep: Sleep, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return sleep(ms)
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    sleep(ms, signal).then(
      () => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
