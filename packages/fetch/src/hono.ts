import type {
  ConcurrencyLimiter,
  Decision,
  HttpShedOptions,
  IpKeyOptions,
  RateLimitHandle,
  Shedder,
} from '@sluice/core'
import { clientIpKey, rateLimitHandle } from '@sluice/core/internal'
import type { Context, MiddlewareHandler } from 'hono'
import { knownAddress } from './exchange'
import { type FetchLimitOptions, fetchLimit } from './limit'
import { type FetchConcurrencyOptions, fetchConcurrency, fetchShedding } from './protect'
import type { FetchProtection } from './step'

declare module 'hono' {
  interface ContextVariableMap {
    /** The rate-limit decision of the last `rateLimit` this request went through (absent when skipped). */
    rateLimit?: Decision
  }
}

/**
 * Options of the Hono {@link rateLimit}: the shared HTTP options, with Hono's context as the request (`key(c)`,
 * `skip(c)`, `cost(c)`), `refund(c, outcome)`, and the client's address (`ip(c)`).
 *
 * @example
 * const options: HonoRateLimitOptions = {
 *   limit: 100,
 *   window: '1m',
 *   key: (c) => c.req.header('x-api-key') ?? 'anonymous',
 * }
 */
export type HonoRateLimitOptions = FetchLimitOptions<Context>

/**
 * The middleware `rateLimit` returns: a Hono middleware that also carries a handle on its keys (`limiter`,
 * `reset(key)`, `peek(keyOrContext)`, `keyOf(c)`).
 *
 * @example
 * const login: HonoRateLimitMiddleware = rateLimit({ name: 'login', limit: 5, window: '15m', block: '15m' })
 * await login.reset(await login.keyOf(c)) // after a successful login
 */
export type HonoRateLimitMiddleware = MiddlewareHandler & RateLimitHandle<Context>

const READER = {
  request: (c: Context) => c.req.raw,
  path: (c: Context) => c.req.path,
  env: (c: Context) => c.env,
}

/**
 * Hono middleware (Hono 4, on any runtime) that rate-limits requests, by client IP unless given a `key`: the
 * address the server reports (Hono's Node server, Bun, Deno), or what `ip(c)` returns. The decision is
 * `c.get('rateLimit')`. Mount it before body parsing and authentication.
 *
 * @example
 * import { Hono } from 'hono'
 * import { rateLimit } from '@sluice/fetch/hono'
 *
 * const app = new Hono()
 * app.use(rateLimit({ limit: 100, window: '1m' }))
 * app.get('/', (c) => c.json({ remaining: c.get('rateLimit')?.remaining }))
 */
export function rateLimit(options: HonoRateLimitOptions): HonoRateLimitMiddleware {
  const limit = fetchLimit(options, READER)
  const middleware = middlewareOf(limit)
  return Object.assign(
    middleware,
    rateLimitHandle(limit.policy, (c: Context) => limit.factsOf(c, c.env)),
  )
}

/** The Hono middleware of a limit or a protection: its step, the rest of the chain, and the end of its response. */
function middlewareOf(protection: FetchProtection<Context>): MiddlewareHandler {
  return async function protect(c, next): Promise<Response | undefined> {
    const step = await protection.decide(c, c.env)
    if (step.done) return step.response
    if (step.decision !== undefined) c.set('rateLimit', step.decision)
    try {
      await next()
    } catch (error) {
      step.fail()
      throw error
    }
    // A handler that threw has had its error handler's response made by now (c.error is set): it is the answer.
    c.res = step.finish(c.res)
    return undefined
  }
}

/**
 * Hono middleware that protects this instance from overload: at most `maxInFlight` requests run at once, a bounded
 * line waits for a slot until `maxWait`, and what cannot be served in time is answered at once with `503`. Mount it
 * first. `.shedder` shows its state.
 *
 * @example
 * app.use(shedLoad({ maxInFlight: 64, tenant: (c) => c.req.header('x-tenant') ?? 'anonymous' }))
 */
export function shedLoad(options: HttpShedOptions<Context>): MiddlewareHandler & { readonly shedder: Shedder } {
  const protection = fetchShedding(options, READER)
  return Object.assign(middlewareOf(protection), { shedder: protection.shedder })
}

/**
 * Hono middleware that limits how many requests each client (or all, `globalLimit`) has in flight at once: over the
 * limit, `429` with `Retry-After`. `.limiter` is the concurrency limiter.
 *
 * @example
 * app.use('/export/*', concurrencyLimit({ limit: 2 }))
 */
export function concurrencyLimit(
  options: FetchConcurrencyOptions<Context>,
): MiddlewareHandler & { readonly limiter: ConcurrencyLimiter } {
  const protection = fetchConcurrency(options, READER)
  return Object.assign(middlewareOf(protection), { limiter: protection.limiter })
}

/**
 * The key Sluice counts a request under by default: the client address the limit found for it (its `ip` option, or
 * what the server reports: Hono's Node server, Bun, Deno), with IPv6 clients grouped per /64 network
 * (`ipv6Subnet`) and every spelling of one address giving one key. A custom `key` that falls back to the client
 * address should fall back to this. A missing address gives `'unknown'`.
 *
 * @example
 * app.use(rateLimit({ limit: 100, window: '1m', key: (c) => c.req.header('x-api-key') ?? ipKey(c) }))
 */
export function ipKey(c: Context, options?: IpKeyOptions): string {
  return clientIpKey(knownAddress(c.req.raw, c.env), options)
}

export type { Decision, HeaderMode, HeadersOption, IpKeyOptions, RateLimitHandle } from '@sluice/core'
export type { FetchOutcome } from './exchange'
export type { FetchOwnOptions } from './limit'
export type { FetchConcurrencyOptions } from './protect'
