import type { ServerResponse } from 'node:http'
import type { Decision, HttpLimitOptions, RateLimitHandle } from '@sluice/core'
import { createHttpPolicy, type HttpAdapter, named, rateLimitHandle } from '@sluice/core/internal'
import type { Context, Middleware, Next } from 'koa'
import { factsOf } from './facts'
import { runPolicy } from './verdict'

declare module 'koa' {
  interface DefaultState {
    /** The rate-limit decision of the last `rateLimit` this request went through (absent when skipped). */
    rateLimit?: Decision
  }
}

/**
 * Options of {@link rateLimit}: the shared HTTP options, with the context as the request (`key(ctx)`,
 * `skip(ctx)`, `cost(ctx)`) and `refund(ctx, ctx.res)`, and a custom rejection.
 *
 * @example
 * const options: KoaRateLimitOptions = {
 *   limit: 100,
 *   window: '1m',
 *   key: (ctx) => ctx.state.user?.id ?? ctx.ip,
 *   refund: (_ctx, res) => res.statusCode >= 500,
 * }
 */
export type KoaRateLimitOptions = HttpLimitOptions<Context, ServerResponse> & KoaOwnOptions

/**
 * What {@link rateLimit} takes beyond the shared HTTP options.
 *
 * @example
 * const own: KoaOwnOptions = { onRejected: (ctx) => { ctx.status = 429; ctx.body = 'Slow down' } }
 */
export interface KoaOwnOptions {
  /**
   * Writes a custom 429 response. The RateLimit, Retry-After and Cache-Control headers are already set.
   * Default: status `statusCode` with `{"error":"rate limit exceeded","retryAfter":<seconds>}`.
   */
  onRejected?: (ctx: Context, decision: Decision) => void | Promise<void>
}

/**
 * The middleware `rateLimit` returns: a Koa middleware that also carries a handle on its keys (`limiter`,
 * `reset(key)`, `peek(keyOrCtx)`, `keyOf(ctx)`).
 *
 * @example
 * const login: RateLimitMiddleware = rateLimit({ name: 'login', limit: 5, window: '15m', block: '15m' })
 * await login.reset(await login.keyOf(ctx)) // after a successful login
 */
export type RateLimitMiddleware = Middleware & RateLimitHandle<Context>

/** The policy's response is the context's Node response, `ctx.res`. */
const KOA: HttpAdapter<ServerResponse> = { ownOptions: ['onRejected'], rawResponse: (res) => res }

/**
 * Koa middleware (Koa 2 and 3) that rate-limits requests, by client IP (`ctx.ip`, proxy-aware with
 * `app.proxy = true`) unless given a `key`. Mount it before body parsers, so a rejected request is answered before
 * its body is read.
 *
 * @example
 * import Koa from 'koa'
 * import { rateLimit } from '@sluice/koa'
 *
 * const app = new Koa()
 * app.use(rateLimit({ limit: 100, window: '1m' }))
 * app.use((ctx) => { ctx.body = { remaining: ctx.state.rateLimit?.remaining } })
 */
export function rateLimit(options: KoaRateLimitOptions): RateLimitMiddleware {
  const policy = createHttpPolicy<Context, ServerResponse>(options, KOA)
  const { onRejected } = options
  const middleware = function rateLimit(ctx: Context, next: Next): Promise<void> {
    return runPolicy(policy, ctx, next, onRejected)
  }
  return Object.assign(named(middleware, 'rateLimit'), rateLimitHandle(policy, factsOf))
}

export type { Decision, HeaderMode, HeadersOption, IpKeyOptions, RateLimitHandle } from '@sluice/core'
export { ipKey } from './facts'
export {
  concurrencyLimit,
  type KoaConcurrencyLimitOptions,
  type KoaShedLoadOptions,
  shedLoad,
} from './protect'
