// The two ways a compat limiter counts: through a store of express-rate-limit's interface (every hit counts, the
// store says how many there were), or through a Sluice store and algorithm (Sluice decides, charging only what it
// admits). The middleware sees one shape, a Counter, bound once at construction.
import { createLimiter, type Limiter, type Logger as SluiceLogger, type Store as SluiceStore } from '@sluice/core'
import type { ClientRateLimitInfo, CompatAlgorithm, IncrementResponse, LegacyStore, Logger, Store } from './types'

/** One request counted. */
export interface Hit {
  /** The hits the window holds, this one included (for a Sluice store: what it admitted, plus this one if refused). */
  readonly totalHits: number
  readonly resetTime: Date | undefined
  readonly limit: number
  readonly exceeded: boolean
  /** The Retry-After a Sluice algorithm computed; undefined for an express-rate-limit store (the reset is used). */
  readonly retryAfterSeconds: number | undefined
}

/** What the middleware asks of a store, whichever kind it is. */
export interface Counter {
  /** The store the application gave (or the default one), for the checks that look at it. */
  readonly store: object & { localKeys?: boolean; prefix?: string }
  /** Counts one hit on `key`; `limitOf` gives the request's limit, asked when this counter needs it. */
  hit(key: string, limitOf: () => Promise<number>, onCount: (totalHits: unknown) => void): Promise<Hit>
  decrement(key: string): Promise<void>
  resetKey(key: string): void | Promise<void>
  getKey: ((key: string) => Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined) | undefined
}

/** Whether `store` is a Sluice store (it binds rules) rather than one of express-rate-limit's interface. */
export function isSluiceStore(store: unknown): store is SluiceStore {
  if (store === null || typeof store !== 'object') return false
  const candidate = store as Partial<Record<'bind' | 'increment' | 'incr', unknown>>
  return (
    typeof candidate.bind === 'function' &&
    typeof candidate.increment !== 'function' &&
    typeof candidate.incr !== 'function'
  )
}

/** A store of the callback interface (`incr` and no `increment`), as a promise store. */
export function promisified(store: Store | LegacyStore): Store {
  const legacy = store as LegacyStore & { increment?: unknown }
  if (typeof legacy.incr !== 'function' || typeof legacy.increment === 'function') return store as Store
  return {
    increment: (key) =>
      new Promise<IncrementResponse>((resolve, reject) => {
        legacy.incr(key, (error, totalHits, resetTime) => (error ? reject(error) : resolve({ totalHits, resetTime })))
      }),
    decrement: async (key) => legacy.decrement(key),
    resetKey: async (key) => legacy.resetKey(key),
    resetAll: async () => legacy.resetAll?.(),
  }
}

/** Counting by an express-rate-limit store: a hit over the limit is still counted, as there. */
export function storeCounter(store: Store, shown: object): Counter {
  return {
    store: shown,
    async hit(key, limitOf, onCount) {
      const counted = await store.increment(key)
      onCount(counted.totalHits)
      const limit = await limitOf()
      return {
        totalHits: counted.totalHits,
        resetTime: counted.resetTime,
        limit,
        exceeded: counted.totalHits > limit,
        retryAfterSeconds: undefined,
      }
    },
    decrement: async (key) => store.decrement(key),
    resetKey: store.resetKey.bind(store),
    getKey: typeof store.get === 'function' ? store.get.bind(store) : undefined,
  }
}

/** The Sluice logger shape over an express-rate-limit logger (error first). */
function sluiceLogger(logger: Logger): SluiceLogger {
  return {
    warn: (message, error) => (error === undefined ? logger.warn(message) : logger.warn(error, message)),
    error: (message, error) => (error === undefined ? logger.error(message) : logger.error(error, message)),
  }
}

/**
 * Counting by a Sluice store and algorithm: Sluice decides, and a refused hit is not charged. A limit that is a
 * function gets a limiter of that limit over the same keys (`withLimits`), so a key keeps its count when its plan
 * changes.
 */
export function sluiceCounter(
  store: SluiceStore,
  options: {
    algorithm: CompatAlgorithm
    windowMs: number
    limit: number | undefined
    logger: Logger
    now: () => number
  },
): Counter {
  const { windowMs, now } = options
  // A limit of 0 refuses everything and counts nothing; a limiter needs a positive one, so it gets 1 until asked.
  const base: Limiter = createLimiter({
    algorithm: options.algorithm,
    limit: options.limit !== undefined && options.limit > 0 ? options.limit : 1,
    window: windowMs,
    store,
    logger: sluiceLogger(options.logger),
  })
  const limiterOf = (limit: number): Limiter => (limit === base.rules[0]?.limit ? base : base.withLimits({ limit }))
  return {
    store,
    async hit(key, limitOf, onCount) {
      const limit = await limitOf()
      if (limit <= 0) {
        onCount(1)
        return {
          totalHits: 1,
          resetTime: new Date(now() + windowMs),
          limit,
          exceeded: true,
          retryAfterSeconds: undefined,
        }
      }
      const decision = await limiterOf(limit).consume(key)
      const totalHits = limit - decision.remaining + (decision.allowed ? 0 : 1)
      onCount(totalHits)
      return {
        totalHits,
        resetTime: new Date(now() + decision.resetMs),
        limit,
        exceeded: !decision.allowed,
        retryAfterSeconds: decision.allowed ? undefined : Math.max(1, Math.ceil(decision.retryAfterMs / 1000)),
      }
    },
    decrement: (key) => base.refund(key),
    resetKey: (key) => base.reset(key),
    async getKey(key) {
      const decision = await base.peek(key)
      const totalHits = decision.limit - decision.remaining
      return totalHits === 0 ? undefined : { totalHits, resetTime: new Date(now() + decision.resetMs) }
    },
  }
}
