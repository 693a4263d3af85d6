import type { RequestFacts } from '@sluice/core/internal'
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
  }
}
