import type { ConcurrencyLimiter, HttpConcurrencyOptions, HttpShedOptions, Shedder } from '@sluice/core'
import { createConcurrencyPolicy, createShedPolicy, named } from '@sluice/core/internal'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { runPolicy } from './verdict'

/**
 * Options of {@link shedLoad}: the shedder's, with `priority(req)`, `tenant(req)` and `skip(req)`.
 *
 * @example
 * const options: ExpressShedLoadOptions = { maxInFlight: 64, priority: (req) => (req.path === '/login' ? 'critical' : 'normal') }
 */
export type ExpressShedLoadOptions = HttpShedOptions<Request>

/**
 * Options of {@link concurrencyLimit}: a limit per key and/or a global one, with `key(req)` (default: the client IP).
 *
 * @example
 * const options: ExpressConcurrencyLimitOptions = { limit: 10, key: (req) => req.get('x-api-key') ?? ipKey(req) }
 */
export type ExpressConcurrencyLimitOptions = HttpConcurrencyOptions<Request>

/**
 * Express middleware that protects this instance from overload: at most `maxInFlight` requests run at once, a
 * bounded line waits for a slot until `maxWait`, and what cannot be served in time is answered at once with
 * `503`, `Retry-After` and `{"error":"overloaded","retryAfter":<s>}`, the least important (`priority`) first and
 * fairly among tenants (`tenant`). Mount it first, before body parsers and authentication, so an overloaded
 * instance spends nothing on a request it sheds. `.shedder` shows its state.
 *
 * @example
 * import express from 'express'
 * import { shedLoad } from '@sluice/express'
 *
 * const app = express()
 * app.use(shedLoad({ maxInFlight: 64, maxEventLoopDelay: '200ms' }))
 * app.use(express.json())
 */
export function shedLoad(options: ExpressShedLoadOptions): RequestHandler & { readonly shedder: Shedder } {
  const policy = createShedPolicy<Request>(options)
  function shedLoad(req: Request, res: Response, next: NextFunction): void {
    runPolicy(policy, req, res, next)
  }
  return Object.assign(named(shedLoad, 'shedLoad'), { shedder: policy.shedder })
}

/**
 * Express middleware that limits how many requests each client (or all clients, `globalLimit`) has in flight at
 * once: a slot is taken before the request goes on and given back when its response ends or the client goes away.
 * Over the limit: `429`, `Retry-After`, `{"error":"too many requests in flight","retryAfter":<s>}`. With a
 * `RedisLeaseStore` the limit holds across instances. `.limiter` is the concurrency limiter.
 *
 * @example
 * import { concurrencyLimit } from '@sluice/express'
 *
 * app.use(concurrencyLimit({ limit: 10, key: (req) => req.get('x-api-key') ?? ipKey(req) }))
 */
export function concurrencyLimit(
  options: ExpressConcurrencyLimitOptions,
): RequestHandler & { readonly limiter: ConcurrencyLimiter } {
  const policy = createConcurrencyPolicy<Request>(options)
  function concurrencyLimit(req: Request, res: Response, next: NextFunction): void {
    runPolicy(policy, req, res, next)
  }
  return Object.assign(named(concurrencyLimit, 'concurrencyLimit'), { limiter: policy.limiter })
}
