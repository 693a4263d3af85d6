// @sluice/express/compat: express-rate-limit 8's `rateLimit`, options, request fields, headers and store interface,
// so that an app moves by changing its import, keeps its store, and can then take Sluice's stores and algorithms.

import { named } from '@sluice/core/internal'
import type { NextFunction, Request, Response } from 'express'
import { setLegacyHeaders, setRetryAfter, setStandardHeaders } from './headers'
import { parseOptions } from './options'
import type { Options, RateLimitInfo, RateLimitRequestHandler } from './types'

/**
 * express-rate-limit's `rateLimit`: the same options (with its defaults), the same `req.rateLimit` (`limit`,
 * `used`, `remaining`, `resetTime`, `key`), the same headers and the same store interface (rate-limit-redis and
 * the others plug in unchanged). A Sluice store (`RedisStore` from `@sluice/redis`, with its failure policies and
 * Cluster; `MemoryStore` from `@sluice/core`) plugs into `store` too, and `algorithm` picks a Sluice algorithm. Unlike
 * express-rate-limit, a refused response carries `Cache-Control: no-store` (`cacheControl: false` leaves it out).
 *
 * @example
 * import { rateLimit } from '@sluice/express/compat' // was: from 'express-rate-limit'
 *
 * app.use(rateLimit({ windowMs: 15 * 60 * 1000, limit: 100, standardHeaders: 'draft-8', legacyHeaders: false }))
 */
export function rateLimit(passedOptions: Partial<Options> = {}): RateLimitRequestHandler {
  const settings = parseOptions(passedOptions)
  const { counter, validations, logger, options } = settings
  validations.creationStack(counter.store.localKeys === true)
  validations.unsharedStore(counter.store)
  const init = (counter.store as { init?: (options: Options) => unknown }).init
  if (typeof init === 'function') {
    try {
      const initialized = init.call(counter.store, options)
      if (initialized instanceof Promise) {
        initialized.catch((error: unknown) => logger.error(error, 'rate limit: the store failed to initialize.'))
      }
    } catch (error) {
      logger.error(error, 'rate limit: the store failed to initialize.')
    }
  }
  const countsOutcome = settings.skipFailedRequests || settings.skipSuccessfulRequests

  async function limit(req: Request, res: Response, next: NextFunction): Promise<void> {
    // Listened to before anything awaits, so that a response that ends early is still seen.
    const finished = countsOutcome && new Promise<void>((resolve) => res.once('finish', () => resolve()))
    const closed = settings.skipFailedRequests && new Promise<void>((resolve) => res.once('close', () => resolve()))
    const failed = settings.skipFailedRequests && new Promise<void>((resolve) => res.once('error', () => resolve()))
    if (await settings.skip(req, res)) {
      next()
      return
    }
    const key = await settings.keyGenerator(req, res)
    const limitOf = async () => {
      const value = typeof settings.limit === 'function' ? await settings.limit(req, res) : settings.limit
      validations.limit(value)
      return value
    }
    let hit: Awaited<ReturnType<typeof counter.hit>>
    try {
      hit = await counter.hit(key, limitOf, (totalHits) => {
        validations.positiveHits(totalHits)
        validations.singleCount(req, counter.store, key)
      })
    } catch (error) {
      if (!settings.passOnStoreError) throw error
      logger.error(error, 'rate limit: the store failed; the request is let through without a limit.')
      next()
      return
    }
    const now = Date.now()
    const info: RateLimitInfo = {
      limit: hit.limit,
      used: hit.totalHits,
      remaining: Math.max(hit.limit - hit.totalHits, 0),
      resetTime: hit.resetTime,
      key,
    }
    // express-rate-limit 6's name for `used`, kept off the enumerable fields as there.
    Object.defineProperty(info, 'current', { configurable: false, enumerable: false, value: hit.totalHits })
    ;(req as unknown as Record<string, RateLimitInfo>)[settings.requestPropertyName] = info
    if (settings.legacyHeaders) setLegacyHeaders(res, info, now)
    if (settings.standardHeaders !== false) {
      if (settings.standardHeaders !== 'draft-6') validations.headersResetTime(info.resetTime)
      const name =
        settings.standardHeaders === 'draft-8'
          ? typeof settings.identifier === 'function'
            ? await settings.identifier(req, res)
            : settings.identifier
          : ''
      setStandardHeaders(res, settings.standardHeaders, info, settings.windowMs, name, now)
    }
    if (countsOutcome) giveBackByOutcome(req, res, key, hit.resetTime, { finished, closed, failed })
    if (!hit.exceeded) {
      next()
      return
    }
    if (settings.legacyHeaders || settings.standardHeaders !== false) {
      const retryAfter =
        typeof settings.retryAfter === 'function' ? await settings.retryAfter(req, res) : settings.retryAfter
      const reset = hit.resetTime === undefined ? Math.ceil(settings.windowMs / 1000) : undefined
      setRetryAfter(
        res,
        retryAfter ??
          hit.retryAfterSeconds ??
          reset ??
          Math.max(0, Math.ceil(((hit.resetTime as Date).getTime() - now) / 1000)),
      )
    }
    // RFC 9111 s5.2.2.5: a refusal is about this moment, and no cache between client and server may replay it.
    if (settings.cacheControl !== false && !res.headersSent) res.setHeader('Cache-Control', settings.cacheControl)
    await settings.handler(req, res, next, options)
  }

  /** Takes the hit back when the response's outcome says it should not count (skipFailed/SuccessfulRequests). */
  function giveBackByOutcome(
    req: Request,
    res: Response,
    key: string,
    resetTime: Date | undefined,
    events: { finished: Promise<void> | false; closed: Promise<void> | false; failed: Promise<void> | false },
  ): void {
    const resetAt = resetTime?.getTime()
    let givenBack = false
    const giveBack = async () => {
      if (givenBack) return
      givenBack = true
      // A hit of a window that has ended is gone already; a decrement would take one from the next window.
      if (resetAt !== undefined && Date.now() >= resetAt) return
      try {
        await counter.decrement(key)
      } catch (error) {
        logger.error(error, 'rate limit: the store failed to take a hit back.')
      }
    }
    const onOutcome = (wanted: boolean) => async () => {
      if ((await settings.requestWasSuccessful(req, res)) === wanted) await giveBack()
    }
    const logged = (what: string) => (error: unknown) => logger.error(error, `rate limit: ${what} failed.`)
    if (events.finished && settings.skipFailedRequests) {
      void events.finished.then(onOutcome(false)).catch(logged('requestWasSuccessful'))
    }
    if (events.finished && settings.skipSuccessfulRequests) {
      void events.finished.then(onOutcome(true)).catch(logged('requestWasSuccessful'))
    }
    // A connection closed before the response ended, or a response that errored, is a failed request.
    if (events.closed) {
      void events.closed.then(() => (res.writableEnded ? undefined : giveBack())).catch(logged('the close handler'))
    }
    if (events.failed) void events.failed.then(giveBack).catch(logged('the error handler'))
  }

  // Express 4 does not catch a rejected promise, so every error goes to next() explicitly.
  const middleware = function rateLimit(req: Request, res: Response, next: NextFunction): void {
    limit(req, res, next).catch(next)
  }
  const { getKey } = counter
  return Object.assign(named(middleware, 'rateLimit'), {
    resetKey: (key: string) => counter.resetKey(key),
    getKey:
      getKey ??
      ((): never => {
        throw new Error('The store has no get(): getKey needs a store that can read a key.')
      }),
  })
}

export { ipKeyGenerator } from './ip-key'
export { MemoryStore, type MemoryStoreOptions } from './memory-store'
export type {
  AugmentedRequest,
  ClientRateLimitInfo,
  CompatAlgorithm,
  DraftHeadersVersion,
  EnabledValidations,
  IncrementCallback,
  IncrementResponse,
  LegacyStore,
  Logger,
  Options,
  RateLimitInfo,
  RateLimitRequestHandler,
  Store,
  ValidationName,
  ValueDeterminingMiddleware,
} from './types'
export { ChangeWarning, ValidationError } from './validations'

/** Milliseconds in a second, a minute, an hour, a day: for `windowMs: 15 * MINUTE`. */
export const SECOND = 1000
export const MINUTE = 60 * SECOND
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

export default rateLimit
