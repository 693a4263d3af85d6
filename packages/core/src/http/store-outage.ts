import { StoreKeyError, StoreUnavailableError } from '../util/errors'
import type { Logger } from '../util/logger'

/**
 * How an HTTP policy answers a store that failed (`onError`), logging each outage once, not once per request, and
 * again after the store answered and failed anew. A StoreUnavailableError is a store that chose to fail closed:
 * 503 whatever `onError` says. One key's unusable state (StoreKeyError) is no outage: the store logged it once for
 * that key, and other keys are fine.
 *
 * @example
 * const outage = storeOutage('rate-limit', 'open', console)
 * try { decision = await limiter.consume(keys) } catch (error) { return outage.failed(error) ? PASS : UNAVAILABLE }
 * outage.answered()
 */
export function storeOutage(what: string, onError: 'open' | 'closed', logger: Logger) {
  let failing = false
  return {
    /** Whether the request goes on uncounted (else it is answered 503). */
    failed(error: unknown): boolean {
      const open = onError === 'open' && !(error instanceof StoreUnavailableError)
      if (error instanceof StoreKeyError) return open
      if (!failing) {
        failing = true
        logger.error(
          `sluice: the ${what} store failed; until it answers, requests are ${open ? 'admitted uncounted' : 'answered 503'}`,
          error,
        )
      }
      return open
    },
    answered(): void {
      failing = false
    },
  }
}
