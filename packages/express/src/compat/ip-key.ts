import { isIPv6 } from 'node:net'
import { ipKey } from '@sluice/core/internal'

/**
 * express-rate-limit's key for an address: an IPv4 address as it is, an IPv4-mapped IPv6 address as its IPv4
 * address, any other IPv6 address as its network of `ipv6Subnet` bits (`'2001:db8::/56'`), or as it is when
 * `ipv6Subnet` is false. Call it in a `keyGenerator` that reads `req.ip`, so one client with a whole IPv6 network
 * is not counted per address.
 *
 * @example
 * import { ipKeyGenerator, rateLimit } from '@sluice/express/compat'
 * app.use(rateLimit({ keyGenerator: (req) => req.get('x-api-key') ?? ipKeyGenerator(req.ip ?? '', 56) }))
 */
export function ipKeyGenerator(ip: string, ipv6Subnet: number | false = 56): string {
  if (!isIPv6(ip)) return ip
  const network = ipKey(ip, ipv6Subnet === false ? 128 : ipv6Subnet)
  // Sluice's ipKey turns a mapped (or IPv4-compatible) address into its IPv4 address: no '/' then.
  if (!network.includes('/')) return network
  return ipv6Subnet === false ? ip : network
}
