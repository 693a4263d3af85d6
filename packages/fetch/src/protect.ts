import type { ConcurrencyLimiter, HttpConcurrencyOptions, HttpShedOptions, Shedder } from '@sluice/core'
import { createConcurrencyPolicy, createShedPolicy } from '@sluice/core/internal'
import { clientFacts, exchangeOf } from './exchange'
import type { FetchProtection, RequestReader } from './step'
import { writeVerdict } from './verdict'

/**
 * The shedder of a fetch adapter's `shedLoad`: the slot a request takes is released when its response's body has
 * been read, given up on, or its handler threw.
 */
export function fetchShedding<Req>(
  options: HttpShedOptions<Req>,
  reader: RequestReader<Req>,
): FetchProtection<Req> & { readonly shedder: Shedder } {
  const policy = createShedPolicy<Req>(options)
  return {
    shedder: policy.shedder,
    async decide(req) {
      const exchange = exchangeOf(reader.request(req))
      return writeVerdict(await policy.handle(req, exchange), exchange)
    },
  }
}

/** Options of a fetch adapter's `concurrencyLimit`: the shared ones, and the client's address (`ip`). */
export type FetchConcurrencyOptions<Req> = HttpConcurrencyOptions<Req> & {
  /** The client's address, the default key: as for `rateLimit`'s `ip`. */
  ip?: (req: Req, env: unknown) => string | undefined
}

/** The concurrency limit of a fetch adapter's `concurrencyLimit`: a slot held until the response ends. */
export function fetchConcurrency<Req>(
  options: FetchConcurrencyOptions<Req>,
  reader: RequestReader<Req>,
): FetchProtection<Req> & { readonly limiter: ConcurrencyLimiter } {
  const { ip, ...shared } = options
  const policy = createConcurrencyPolicy<Req>(shared)
  return {
    limiter: policy.limiter,
    async decide(req, env) {
      const facts = clientFacts(req, env, reader, ip)
      const exchange = exchangeOf(reader.request(req))
      return writeVerdict(await policy.handle(req, exchange, facts), exchange)
    },
  }
}
