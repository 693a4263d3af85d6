import type { IpKeyOptions } from '@sluice/core'
import { clientIpKey, type RequestFacts } from '@sluice/core/internal'
import type { FastifyRequest } from 'fastify'

/**
 * What the policies read from a request: the framework's proxy-aware client address and whether it trusted a proxy
 * for it (for the X-Forwarded-For warning), the method, path and headers. Shared by `rateLimit` and
 * `concurrencyLimit`.
 */
export function factsOf(request: FastifyRequest): RequestFacts {
  return {
    ip: request.ip,
    method: request.method,
    path: request.url,
    headers: request.headers,
    // With trustProxy, request.ips lists the socket address and the forwarded ones it trusted.
    trustsProxy: () => (request.ips?.length ?? 0) > 1,
    trustsEveryProxy: () => trustsEveryProxy(request.server),
  }
}

/**
 * Whether the Fastify instance was made with `trustProxy: true`. Fastify keeps its options under a symbol of its own
 * (`fastify.options`, in Fastify 4 and 5) and shows no trustProxy in `initialConfig`; where that symbol is missing,
 * nothing is warned of.
 */
function trustsEveryProxy(server: object): boolean {
  // A plugin's instance is made with Object.create from its parent's: the symbol is on the root instance.
  for (let holder: object | null = server; holder !== null; holder = Object.getPrototypeOf(holder)) {
    const options = Object.getOwnPropertySymbols(holder).find((symbol) => symbol.description === 'fastify.options')
    if (options !== undefined) {
      return (holder as Record<symbol, { trustProxy?: unknown } | undefined>)[options]?.trustProxy === true
    }
  }
  return false
}

/**
 * The key Sluice counts a request under by default: the client address as Fastify reports it (`request.ip`,
 * proxy-aware), with IPv6 clients grouped per /64 network (`ipv6Subnet`, as the limiters' option) and every
 * spelling of one address (a port, brackets, `::ffff:` for IPv4) giving one key. A custom `key` that falls back
 * to the client address should fall back to this: `request.ip` alone counts each of the 2^64 addresses of one IPv6
 * host apart. A missing address gives `'unknown'`; what is not an address is keyed as it is, cut to 64 characters.
 *
 * @example
 * await app.register(rateLimit, { limit: 100, window: '1m', key: (request) => request.user?.id ?? ipKey(request) })
 * ipKey(request, { ipv6Subnet: 56 }) // '2001:db8:1:200::/56' for a client at 2001:db8:1:2ab::9
 */
export function ipKey(request: FastifyRequest, options?: IpKeyOptions): string {
  return clientIpKey(request.ip, options)
}
