import type { Decision, HttpLimitOptions } from '@sluice/core'
import { createHttpPolicy, type HttpAdapter, type HttpPolicy, type RequestFacts } from '@sluice/core/internal'
import { clientFacts, type Exchange, exchangeOf, type FetchOutcome } from './exchange'
import type { FetchProtection, RequestReader } from './step'
import { writeVerdict } from './verdict'

/**
 * What every fetch adapter takes beyond the shared HTTP options, `Req` being what its functions are given (a
 * `Request`, or Hono's context).
 *
 * @example
 * const own: FetchOwnOptions<Request> = {
 *   ip: (request) => request.headers.get('cf-connecting-ip') ?? undefined, // on Cloudflare, which sets it
 *   onRejected: (_request, decision) => new Response(`Slow down: ${decision.retryAfterMs} ms`, { status: 429 }),
 * }
 */
export interface FetchOwnOptions<Req> {
  /**
   * The client's address, the default key. Default: what the server hands over beside the request (Deno's
   * `info.remoteAddr`, Bun's `server.requestIP`, Node's socket under Hono's Node server). A fetch handler has no
   * socket of its own: on a Worker or an edge function, return the address header your platform sets (and that
   * no client can forge past it); never a raw X-Forwarded-For that the client wrote.
   */
  ip?: (req: Req, env: unknown) => string | undefined
  /**
   * The response to a rate-limited request. The RateLimit, Retry-After and Cache-Control headers are added to it.
   * Default: status `statusCode` with `{"error":"rate limit exceeded","retryAfter":<seconds>}`.
   */
  onRejected?: (req: Req, decision: Decision) => Response | Promise<Response>
}

/** Options of a fetch adapter's `rateLimit`: the shared HTTP options, with `refund(req, outcome)`. */
export type FetchLimitOptions<Req> = HttpLimitOptions<Req, FetchOutcome> & FetchOwnOptions<Req>

const FETCH: HttpAdapter<Exchange> = { ownOptions: ['ip', 'onRejected'], rawResponse: (exchange) => exchange }

/**
 * A fetch adapter's limit, built once: `decide` runs per request. Shared by `@sluice/fetch` and its Hono
 * middleware, so both answer alike.
 */
export interface FetchLimit<Req> extends FetchProtection<Req> {
  readonly policy: HttpPolicy<Req, Exchange>
  factsOf(req: Req, env?: unknown): RequestFacts
}

/**
 * Builds the limit of a fetch adapter from its options and how it reads its requests. Invalid options throw an
 * `InvalidOptionError` naming the option.
 *
 * @example
 * const limit = fetchLimit({ limit: 100, window: '1m' }, { request: (r) => r, path: (r) => new URL(r.url).pathname, env: (_r, env) => env })
 * const step = await limit.decide(request, info)
 */
export function fetchLimit<Req>(options: FetchLimitOptions<Req>, reader: RequestReader<Req>): FetchLimit<Req> {
  const policy = createHttpPolicy<Req, Exchange>(options, FETCH)
  const { ip, onRejected } = options
  const facts = (req: Req, env?: unknown) => clientFacts(req, env, reader, ip)

  return {
    policy,
    factsOf: facts,
    async decide(req, env) {
      // One exchange per request, whichever limits it passes: their headers merge on it, as on one Node response.
      const exchange = exchangeOf(reader.request(req))
      const verdict = await policy.handle(req, exchange, facts(req, env))
      return writeVerdict(verdict, exchange, onRejected && ((decision) => onRejected(req, decision)))
    },
  }
}
