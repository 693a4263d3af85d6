import type { Decision, HttpLimitOptions, RateLimitHandle } from '@sluice/core'
import { createHttpPolicy, type HttpAdapter, named, rateLimitHandle } from '@sluice/core/internal'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { factsOf } from './facts'
import { runPolicy } from './verdict'

declare global {
  namespace Express {
    interface Request {
      /** The rate-limit decision of the last `rateLimit` this request went through (absent when skipped). */
      rateLimit?: Decision
    }
  }
}

/**
 * Options of {@link rateLimit}: the shared HTTP options, and a custom rejection.
 *
 * @example
 * const options: ExpressRateLimitOptions = {
 *   limit: 100,
 *   window: '1m',
 *   onRejected: (_req, res, decision) => res.status(429).send(`Slow down: ${decision.retryAfterMs} ms`),
 * }
 */
export type ExpressRateLimitOptions = HttpLimitOptions<Request, Response> & ExpressOwnOptions

/**
 * What {@link rateLimit} takes beyond the shared HTTP options.
 *
 * @example
 * const own: ExpressOwnOptions = { onRejected: (_req, res) => { res.status(429).send('Slow down') } }
 */
export interface ExpressOwnOptions {
  /**
   * Writes a custom 429 response. The RateLimit, Retry-After and Cache-Control headers are already set.
   * Default: status `statusCode` with `{"error":"rate limit exceeded","retryAfter":<seconds>}`.
   */
  onRejected?: (req: Request, res: Response, decision: Decision, next: NextFunction) => void | Promise<void>
}

/**
 * The middleware `rateLimit` returns: an Express handler that also carries a handle on its keys (`limiter`,
 * `reset(key)`, `peek(keyOrReq)`, `keyOf(req)`).
 *
 * @example
 * const login: RateLimitMiddleware = rateLimit({ name: 'login', limit: 5, window: '15m', block: '15m' })
 * await login.reset(await login.keyOf(req)) // after a successful login
 */
export type RateLimitMiddleware = RequestHandler & RateLimitHandle<Request>

/** Express's response is the Node response itself. */
const EXPRESS: HttpAdapter<Response> = { ownOptions: ['onRejected'], rawResponse: (res) => res }

/**
 * Express middleware (Express 4 and 5) that rate-limits requests, by client IP unless given a `key`. Mount it
 * before body parsers, so a rejected request is answered before its body is read.
 *
 * @example
 * import express from 'express'
 * import { rateLimit } from '@sluice/express'
 *
 * const app = express()
 * app.use(rateLimit({ limit: 100, window: '1m' }))
 * const loginLimit = rateLimit({ name: 'login', limit: 5, window: '15m', block: '15m' })
 * app.post('/login', loginLimit, async (req, res) => {
 *   if (await checkPassword(req)) await loginLimit.reset(await loginLimit.keyOf(req))
 * })
 */
export function rateLimit(options: ExpressRateLimitOptions): RateLimitMiddleware {
  const policy = createHttpPolicy<Request, Response>(options, EXPRESS)
  const { onRejected } = options
  const middleware = function rateLimit(req: Request, res: Response, next: NextFunction): void {
    runPolicy(policy, req, res, next, onRejected)
  }
  return Object.assign(named(middleware, 'rateLimit'), rateLimitHandle(policy, factsOf))
}

export type { Decision, HeaderMode, HeadersOption, IpKeyOptions, RateLimitHandle } from '@sluice/core'
export { ipKey } from './facts'
export {
  concurrencyLimit,
  type ExpressConcurrencyLimitOptions,
  type ExpressShedLoadOptions,
  shedLoad,
} from './protect'
