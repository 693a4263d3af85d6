import type { RequestFacts } from '@sluice/core/internal'
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
  }
}
