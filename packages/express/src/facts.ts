import type { IpKeyOptions } from '@sluice/core'
import { clientIpKey, type RequestFacts } from '@sluice/core/internal'
import type { Request } from 'express'

/**
 * What the policies read from a request: the framework's proxy-aware client address and whether it trusted a proxy
 * for it (for the X-Forwarded-For warning), the method, path and headers. Shared by `rateLimit` and
 * `concurrencyLimit`.
 */
export function factsOf(req: Request): RequestFacts {
  return {
    ip: req.ip,
    method: req.method,
    path: req.path,
    headers: req.headers,
    // Express reports forwarded addresses in req.ips only when 'trust proxy' trusts this peer.
    trustsProxy: () => req.ips.length > 0,
    trustsEveryProxy: () => req.app.get('trust proxy') === true,
  }
}

/**
 * The key Sluice counts a request under by default: the client address as Express reports it (`req.ip`,
 * proxy-aware), with IPv6 clients grouped per /64 network (`ipv6Subnet`, as the limiters' option) and every
 * spelling of one address (a port, brackets, `::ffff:` for IPv4) giving one key. A custom `key` that falls back
 * to the client address should fall back to this: `req.ip` alone counts each of the 2^64 addresses of one IPv6
 * host apart. A missing address gives `'unknown'`; what is not an address is keyed as it is, cut to 64 characters.
 *
 * @example
 * app.use(rateLimit({ limit: 100, window: '1m', key: (req) => req.get('x-api-key') ?? ipKey(req) }))
 * ipKey(req, { ipv6Subnet: 56 }) // '2001:db8:1:200::/56' for a client at 2001:db8:1:2ab::9
 */
export function ipKey(req: Request, options?: IpKeyOptions): string {
  return clientIpKey(req.ip, options)
}
