/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. Injectable in {@link PoliteFetchOptions}. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>

/** A `setTimeout` wait whose timer is cleared on abort, so an aborted wait holds nothing open. */
export const timerSleep: Sleep = function timerSleep(ms, signal) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
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
