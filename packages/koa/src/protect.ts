import type { ConcurrencyLimiter, HttpConcurrencyOptions, HttpShedOptions, Shedder } from '@sluice/core'
import { createConcurrencyPolicy, createShedPolicy, named } from '@sluice/core/internal'
import type { Context, Middleware, Next } from 'koa'
import { runPolicy } from './verdict'

/**
 * Options of {@link shedLoad}: the shedder's, with `priority(ctx)`, `tenant(ctx)` and `skip(ctx)`.
 *
 * @example
 * const options: KoaShedLoadOptions = { maxInFlight: 64, tenant: (ctx) => ctx.get('x-tenant') || 'anonymous' }
 */
export type KoaShedLoadOptions = HttpShedOptions<Context>

/**
 * Options of {@link concurrencyLimit}: a limit per key and/or a global one, with `key(ctx)` (default: `ctx.ip`).
 *
 * @example
 * const options: KoaConcurrencyLimitOptions = { limit: 10, key: (ctx) => ctx.get('x-api-key') || ipKey(ctx) }
 */
export type KoaConcurrencyLimitOptions = HttpConcurrencyOptions<Context>

/**
 * Koa middleware that protects this instance from overload: at most `maxInFlight` requests run at once, a bounded
 * line waits for a slot until `maxWait`, and what cannot be served in time is answered at once with `503`,
 * `Retry-After` and `{"error":"overloaded","retryAfter":<s>}`, the least important first and fairly among tenants.
 * Mount it first, before body parsers and authentication. `.shedder` shows its state.
 *
 * @example
 * import Koa from 'koa'
 * import { shedLoad } from '@sluice/koa'
 *
 * const app = new Koa()
 * app.use(shedLoad({ maxInFlight: 64, maxEventLoopDelay: '200ms' }))
 */
export function shedLoad(options: KoaShedLoadOptions): Middleware & { readonly shedder: Shedder } {
  const policy = createShedPolicy<Context>(options)
  function shedLoad(ctx: Context, next: Next): Promise<void> {
    return runPolicy(policy, ctx, next)
  }
  return Object.assign(named(shedLoad, 'shedLoad'), { shedder: policy.shedder })
}

/**
 * Koa middleware that limits how many requests each client (or all clients, `globalLimit`) has in flight at once:
 * a slot is taken before the request goes on and given back when its response ends or the client goes away. Over
 * the limit: `429`, `Retry-After`, `{"error":"too many requests in flight","retryAfter":<s>}`. `.limiter` is the
 * concurrency limiter.
 *
 * @example
 * import { concurrencyLimit } from '@sluice/koa'
 *
 * app.use(concurrencyLimit({ limit: 10 }))
 */
export function concurrencyLimit(
  options: KoaConcurrencyLimitOptions,
): Middleware & { readonly limiter: ConcurrencyLimiter } {
  const policy = createConcurrencyPolicy<Context>(options)
  function concurrencyLimit(ctx: Context, next: Next): Promise<void> {
    return runPolicy(policy, ctx, next)
  }
  return Object.assign(named(concurrencyLimit, 'concurrencyLimit'), { limiter: policy.limiter })
}
