import { MAX_TIMER_MS } from './long-timeout'

/**
 * Resolves after `ms`, however long (longer waits are a chain of timers), or rejects with the signal's reason when
 * it aborts first.
 *
 * @example
 * await sleep(decision.delayMs, signal)
 */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout>
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const wait = (left: number) => {
      timer = setTimeout(
        () => {
          if (left > MAX_TIMER_MS) return wait(left - MAX_TIMER_MS)
          signal?.removeEventListener('abort', onAbort)
          resolve()
        },
        Math.min(left, MAX_TIMER_MS),
      )
    }
    wait(ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
