import type { ConcurrencyLimiter, HttpConcurrencyOptions, HttpShedOptions, Shedder } from '@sluice/core'
import {
  createConcurrencyPolicy,
  createShedPolicy,
  JSON_CONTENT_TYPE,
  type ProtectVerdict,
} from '@sluice/core/internal'
import { clientFacts, type Exchange, exchangeOf } from './exchange'
import type { FetchProtection, RequestReader, Step } from './step'

/** The refusal of a protection (503 overloaded, 429 too many in flight), as a Response. */
function stepOf(verdict: ProtectVerdict, exchange: Exchange): Step {
  if (verdict.action === 'pass') {
    return {
      done: false,
      decision: undefined,
      finish: (response) => exchange.settle(response),
      fail: () => exchange.fail(),
    }
  }
  const headers = new Headers(verdict.headers as [string, string][])
  headers.set('Content-Type', JSON_CONTENT_TYPE)
  return { done: true, response: new Response(JSON.stringify(verdict.body), { status: verdict.status, headers }) }
}

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
      return stepOf(await policy.handle(req, exchange), exchange)
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
      return stepOf(await policy.handle(req, facts, exchange), exchange)
    },
  }
}
