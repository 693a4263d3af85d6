/** How a backoff wait is drawn: `'full'` jitter, uniformly in [0, bound]; `'none'`, the bound itself. */
export type Jitter = 'full' | 'none'

/** Options of {@link backoffDelayMs}. */
export interface BackoffOptions {
  /** The bound of the first retry's wait, in ms. Default 500. */
  baseDelayMs?: number
  /** The largest bound of any retry's wait, in ms. Default 10 000. */
  maxDelayMs?: number
  /** Default `'full'`. */
  jitter?: Jitter
  /** A uniform random number in [0, 1). Default `Math.random`. */
  random?: () => number
}

/**
 * The wait before retry `n` (the first retry, after the first attempt failed, is n = 1): exponential backoff with
 * full jitter, random(0, min(cap, base * 2^(n-1))), rounded down to whole ms. Full jitter spreads clients that were
 * refused together over the whole interval instead of sending them back together in waves (see "Exponential
 * Backoff And Jitter", AWS Architecture Blog, 2015).
 *
 * @example
 * backoffDelayMs(1) // somewhere in [0, 500]
 * backoffDelayMs(6, { jitter: 'none' }) // 10000: 500 * 2^5 = 16000 is capped at 10 s
 */
export function backoffDelayMs(retry: number, options: BackoffOptions = {}): number {
  const { baseDelayMs = 500, maxDelayMs = 10_000, jitter = 'full', random = Math.random } = options
  const bound = Math.min(maxDelayMs, baseDelayMs * 2 ** (retry - 1))
  if (jitter === 'none') return bound
  return Math.min(bound, Math.floor(random() * (bound + 1)))
}
