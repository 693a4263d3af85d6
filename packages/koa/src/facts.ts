import type { IpKeyOptions } from '@sluice/core'
import { clientIpKey, type RequestFacts } from '@sluice/core/internal'
import type { Context } from 'koa'

/**
 * What the policies read from a request: the framework's proxy-aware client address and whether it trusted a proxy
 * for it (for the X-Forwarded-For warning), the method, path and headers. Shared by `rateLimit` and
 * `concurrencyLimit`.
 */
export function factsOf(ctx: Context): RequestFacts {
  return new KoaFacts(ctx)
}

/**
 * The facts of one request, each read from the context when asked: most requests need only the address, and Koa's
 * `ctx.path` parses the URL (a quarter of a microsecond on a busy server) for a warning that is rarely written.
 */
class KoaFacts implements RequestFacts {
  constructor(private readonly ctx: Context) {}

  get ip(): string {
    return this.ctx.ip
  }

  get method(): string {
    return this.ctx.method
  }

  get path(): string {
    return this.ctx.path
  }

  get headers(): Context['headers'] {
    return this.ctx.headers
  }

  // Koa reads X-Forwarded-For for ctx.ip only when app.proxy is set.
  trustsProxy(): boolean {
    return this.ctx.app.proxy
  }

  // Without maxIpsCount, Koa takes the left-most of every X-Forwarded-For entry.
  trustsEveryProxy(): boolean {
    return this.ctx.app.proxy && !(this.ctx.app.maxIpsCount > 0)
  }
}

/**
 * The key Sluice counts a request under by default: the client address as Koa reports it (`ctx.ip`,
 * proxy-aware), with IPv6 clients grouped per /64 network (`ipv6Subnet`, as the limiters' option) and every
 * spelling of one address (a port, brackets, `::ffff:` for IPv4) giving one key. A custom `key` that falls back
 * to the client address should fall back to this: `ctx.ip` alone counts each of the 2^64 addresses of one IPv6
 * host apart. A missing address gives `'unknown'`; what is not an address is keyed as it is, cut to 64 characters.
 *
 * @example
 * app.use(rateLimit({ limit: 100, window: '1m', key: (ctx) => ctx.get('x-api-key') || ipKey(ctx) }))
 * ipKey(ctx, { ipv6Subnet: 56 }) // '2001:db8:1:200::/56' for a client at 2001:db8:1:2ab::9
 */
export function ipKey(ctx: Context, options?: IpKeyOptions): string {
  return clientIpKey(ctx.ip, options)
}
