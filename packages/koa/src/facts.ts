import type { RequestFacts } from '@sluice/core/internal'
import type { Context } from 'koa'

/**
 * What the policies read from a request: the framework's proxy-aware client address and whether it trusted a proxy
 * for it (for the X-Forwarded-For warning), the method, path and headers. Shared by `rateLimit` and
 * `concurrencyLimit`.
 */
export function factsOf(ctx: Context): RequestFacts {
  return {
    ip: ctx.ip,
    method: ctx.method,
    path: ctx.path,
    headers: ctx.headers,
    // Koa reads X-Forwarded-For for ctx.ip only when app.proxy is set.
    trustsProxy: () => ctx.app.proxy,
  }
}
