import type {
  ConcurrencyLimiter,
  Decision,
  HttpShedOptions,
  IpKeyOptions,
  RateLimitHandle,
  Shedder,
} from '@sluice/core'
import { clientIpKey, rateLimitHandle } from '@sluice/core/internal'
import { decisions, knownAddress } from './exchange'
import { type FetchLimitOptions, fetchLimit } from './limit'
import { type FetchConcurrencyOptions, fetchConcurrency, fetchShedding } from './protect'
import type { FetchProtection } from './step'

/**
 * Options of {@link rateLimit}: the shared HTTP options, with the Web `Request` as the request (`key(request)`,
 * `skip(request)`, `cost(request)`), `refund(request, outcome)`, and the client's address (`ip`).
 *
 * @example
 * const options: FetchRateLimitOptions = {
 *   limit: 100,
 *   window: '1m',
 *   key: (request) => request.headers.get('x-api-key') ?? 'anonymous',
 *   refund: (_request, outcome) => outcome.status >= 500,
 * }
 */
export type FetchRateLimitOptions = FetchLimitOptions<Request>

/** A fetch handler: a `Request` in, a `Response` out, with whatever the server passes beside the request. */
export type FetchHandler<Args extends unknown[]> = (request: Request, ...args: Args) => Response | Promise<Response>

/**
 * What {@link rateLimit} returns: a function that wraps a fetch handler in the limit, and a handle on the keys it
 * counts (`limiter`, `reset(key)`, `peek(keyOrRequest)`, `keyOf(request)`).
 *
 * @example
 * const limit: FetchRateLimit = rateLimit({ limit: 100, window: '1m' })
 * export const GET = limit(async () => Response.json({ ok: true })) // a Next.js route handler
 */
export interface FetchRateLimit extends RateLimitHandle<Request> {
  // The wrapped handler takes what the server passes even when the handler itself ignores it (the address is there).
  <Args extends unknown[]>(
    handler: FetchHandler<Args>,
  ): (request: Request, ...args: [...Args, ...unknown[]]) => Promise<Response>
  /**
   * The decision a request of cost 1 would get now, charging nothing. A request that went through a Sluice limit is
   * known by its address; for one that did not, give what the server handed over beside it (`env`), or an `ip`.
   */
  peek(target: Request | string | readonly string[], env?: unknown): Promise<Decision>
  /** The keys the limit counts a request under, one per rule; `env` as for {@link FetchRateLimit.peek}. */
  keyOf(request: Request, env?: unknown): Promise<string[]>
}

// What the server handed over beside each request that went through a limit, so that a handler's keyOf(request)
// or peek(request), on this limit or another, finds the client's address.
const envs = new WeakMap<Request, unknown>()

const READER = {
  request: (request: Request) => request,
  path: (request: Request) => new URL(request.url).pathname,
  env: (_request: Request, env: unknown) => env,
}

/**
 * A request goes through a limit or a protection, then the handler; its response ends the hold on it. What the
 * server passes beside the request is kept, for the handler's keyOf(request) and ipKey(request).
 */
function guarded<Args extends unknown[]>(protection: FetchProtection<Request>, handler: FetchHandler<Args>) {
  return async function guardedHandler(request: Request, ...args: [...Args, ...unknown[]]): Promise<Response> {
    if (args.length > 0) envs.set(request, args[0])
    const step = await protection.decide(request, args[0])
    if (step.done) return step.response
    if (step.decision !== undefined) decisions.set(request, step.decision)
    let response: Response
    try {
      response = await handler(request, ...(args as unknown as Args))
    } catch (error) {
      step.fail()
      throw error
    }
    return step.finish(response)
  }
}

/**
 * Rate-limits a Web-standard fetch handler (`Request` in, `Response` out): Bun.serve, Deno.serve, Next.js route
 * handlers, Cloudflare Workers, and Node's fetch-style servers. By client IP, as the server reports it beside the
 * request, unless given a `key` (or an `ip`). A rejected request gets its 429 (or 503, 403, 413) without reaching
 * the handler; an admitted one gets the RateLimit headers on the handler's response.
 *
 * @example
 * import { rateLimit } from '@sluice/fetch'
 *
 * const limit = rateLimit({ limit: 100, window: '1m' })
 * Deno.serve(limit((request) => new Response(`hello, ${decisionOf(request)?.remaining} left`)))
 */
export function rateLimit(options: FetchRateLimitOptions): FetchRateLimit {
  const limit = fetchLimit(options, READER)
  const wrap = <Args extends unknown[]>(handler: FetchHandler<Args>) => guarded(limit, handler)
  const handle = rateLimitHandle(limit.policy, (request: Request) => limit.factsOf(request, envs.get(request)))
  // Not `instanceof Request`: servers hand over requests of their own classes (Hono's Node server does).
  const remember = (target: Request | string | readonly string[], env: unknown) => {
    if (env !== undefined && typeof target === 'object' && !Array.isArray(target)) envs.set(target as Request, env)
  }
  return Object.assign(wrap, {
    limiter: handle.limiter,
    reset: handle.reset,
    peek(target: Request | string | readonly string[], env?: unknown) {
      remember(target, env)
      return handle.peek(target)
    },
    keyOf(request: Request, env?: unknown) {
      remember(request, env)
      return handle.keyOf(request)
    },
  })
}

/** What `shedLoad` and `concurrencyLimit` return: a function that wraps a fetch handler in the protection. */
export type FetchProtect = <Args extends unknown[]>(
  handler: FetchHandler<Args>,
) => (request: Request, ...args: [...Args, ...unknown[]]) => Promise<Response>

/**
 * Protects this instance from overload, in front of a fetch handler: at most `maxInFlight` requests run at once, a
 * bounded line waits for a slot until `maxWait`, and what cannot be served in time is answered at once with `503`,
 * `Retry-After` and `{"error":"overloaded","retryAfter":<s>}`. A slot is held until the response's body has been read.
 *
 * @example
 * const shed = shedLoad({ maxInFlight: 64, tenant: (request) => request.headers.get('x-tenant') ?? 'anonymous' })
 * Bun.serve({ fetch: shed(limit(handler)) })
 */
export function shedLoad(options: HttpShedOptions<Request>): FetchProtect & { readonly shedder: Shedder } {
  const protection = fetchShedding(options, READER)
  const wrap = <Args extends unknown[]>(handler: FetchHandler<Args>) => guarded(protection, handler)
  return Object.assign(wrap, { shedder: protection.shedder })
}

/**
 * Limits how many requests each client (or all, `globalLimit`) has in flight at once, in front of a fetch handler:
 * over the limit, `429` with `Retry-After`. A slot is held until the response's body has been read, given up on, or
 * the handler threw.
 *
 * @example
 * const inFlight = concurrencyLimit({ limit: 10 })
 * export const POST = inFlight(async (request) => Response.json(await exportFor(request)))
 */
export function concurrencyLimit(
  options: FetchConcurrencyOptions<Request>,
): FetchProtect & { readonly limiter: ConcurrencyLimiter } {
  const protection = fetchConcurrency(options, READER)
  const wrap = <Args extends unknown[]>(handler: FetchHandler<Args>) => guarded(protection, handler)
  return Object.assign(wrap, { limiter: protection.limiter })
}

/**
 * The decision on a request that went through {@link rateLimit} (of the last limit it went through), for the
 * handler; undefined when skipped or not limited.
 *
 * @example
 * const handler = limit((request) => Response.json({ remaining: decisionOf(request)?.remaining }))
 */
export function decisionOf(request: Request): Decision | undefined {
  return decisions.get(request)
}

/**
 * The key Sluice counts a request under by default: the client address the limit found for it (its `ip` option, or
 * what the server handed over beside it), with IPv6 clients grouped per /64 network (`ipv6Subnet`) and every
 * spelling of one address giving one key. A custom `key` that falls back to the client address should fall back to
 * this. A request no limit has seen is keyed by what the server handed over with it, `env`; a missing address gives
 * `'unknown'`.
 *
 * @example
 * rateLimit({ limit: 100, window: '1m', key: (request) => request.headers.get('x-api-key') ?? ipKey(request) })
 */
export function ipKey(request: Request, options?: IpKeyOptions, env?: unknown): string {
  return clientIpKey(knownAddress(request, env ?? envs.get(request)), options)
}

export type { Decision, HeaderMode, HeadersOption, IpKeyOptions, RateLimitHandle } from '@sluice/core'
export { type FetchOutcome, peerAddress } from './exchange'
export type { FetchOwnOptions } from './limit'
export type { FetchConcurrencyOptions } from './protect'
