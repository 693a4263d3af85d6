import { consumeNow, type Limiter } from '../limiter/limiter'
import type { Decision } from '../rules/decision'
import { headerWriter } from './headers'
import { costOf, keysOf, type RequestFacts } from './keys'
import { type HttpAdapter, type HttpLimitOptions, type HttpSettings, httpSettings } from './options'
import { onResponseEnd } from './response-end'
import { storeOutage } from './store-outage'
import {
  FORBIDDEN,
  type LimitVerdict,
  PASS_UNCOUNTED,
  type RequestPolicy,
  SKIP,
  STORE_UNAVAILABLE,
  verdictOf,
} from './verdict'

/**
 * The HTTP policy of one `rateLimit`, built once at construction; `handle` runs per request.
 *
 * @example
 * const policy: HttpPolicy<Request, Response> = createHttpPolicy({ limit: 100, window: '1m' }, express)
 * await policy.limiter.reset('192.0.2.1')
 */
export interface HttpPolicy<Req, Res> extends RequestPolicy<Req, Res> {
  /** The limiter (with a `limit` or `window` function, its rules show placeholders: 1, and 1 s). */
  readonly limiter: Limiter
  /** The verdict, at once when every step can give it at once (see `consumeNow`); an error always rejects. */
  handle(req: Req, res: Res, facts: RequestFacts): LimitVerdict | Promise<LimitVerdict>
  /** The keys the limiter counts a request under, one per rule (allow and deny lists and `skip` aside). */
  keysOf(req: Req, facts: RequestFacts): Promise<string[]>
  /** The limiter of a request: the limiter itself, or its variant for the request's `limit` and `window`. */
  limiterOf(req: Req): Promise<Limiter>
  /** Whether a rule's `limit` or `window` is a function of the request. */
  readonly perRequestLimits: boolean
}

/**
 * Builds the HTTP policy the adapters share: allow and deny lists, keys, cost, per-request limits, skip, stacked
 * rules, status, headers, body, refund and the store-failure policy. The adapter describes its framework once
 * (`adapter`), passes each request's facts in and writes the verdict out. Invalid options throw an
 * {@link InvalidOptionError} naming the option.
 *
 * @example
 * const policy = createHttpPolicy<Request, Response>(options, { ownOptions: ['onRejected'], rawResponse: (res) => res })
 * const verdict = await policy.handle(req, res, { ip: req.ip, method, path, headers, trustsProxy: () => false })
 * if (verdict.action === 'reject') send(verdict.status, verdict.headers, verdict.body)
 */
export function createHttpPolicy<Req, Res>(
  options: HttpLimitOptions<Req, Res>,
  adapter: HttpAdapter<Res>,
): HttpPolicy<Req, Res> {
  const settings = httpSettings(options, adapter)
  const { limiter, skip, limitsOf, allowList, denyList } = settings
  const keys = keysOf(settings)
  const cost = costOf(settings)
  const outage = storeOutage('rate-limit', settings.onError, settings.logger)
  const refundAfter = refunder(settings)
  const verdictSettings = {
    headerModes: settings.headerModes,
    writeHeaders: headerWriter(settings.headerModes),
    statusCode: settings.statusCode,
    clock: settings.clock,
  }

  /** The limiter of a request's limits; a promise only when a `limit` or `window` function is asynchronous. */
  function limiterOf(req: Req): Limiter | Promise<Limiter> {
    if (limitsOf === undefined) return limiter
    const limits = limitsOf(req)
    return Array.isArray(limits) ? limiter.withLimits(limits) : limits.then((l) => limiter.withLimits(l))
  }

  function failed(error: unknown): LimitVerdict {
    return outage.failed(error) ? PASS_UNCOUNTED : STORE_UNAVAILABLE
  }

  function answer(req: Req, res: Res, request: Charge, decision: Decision): LimitVerdict {
    outage.answered()
    if (decision.allowed) refundAfter(req, res, request.keys, request.cost, request.limiter)
    return verdictOf(decision, request.cost, verdictSettings, settings.rawResponse(res))
  }

  // The steps below answer in the turn the request arrived in when every one of them can (the IP key, a fixed cost,
  // the memory store): on a busy server a promise and an await cost more than the rest of a rejection. A key, cost
  // or limit function that is asynchronous, or a store that is, is waited for where it comes, in the same order.
  function consume(req: Req, res: Res, request: Charge): LimitVerdict | Promise<LimitVerdict> {
    let decision: Decision | Promise<Decision>
    try {
      decision = consumeNow(request.limiter, request.keys, request.cost)
    } catch (error) {
      return failed(error)
    }
    if (decision instanceof Promise) return decision.then((d) => answer(req, res, request, d), failed)
    return answer(req, res, request, decision)
  }

  function withCost(req: Req, res: Res, requestKeys: string[], requestCost: number) {
    const requestLimiter = limiterOf(req)
    if (requestLimiter instanceof Promise) {
      return requestLimiter.then((l) => consume(req, res, { keys: requestKeys, cost: requestCost, limiter: l }))
    }
    return consume(req, res, { keys: requestKeys, cost: requestCost, limiter: requestLimiter })
  }

  function withKeys(req: Req, res: Res, requestKeys: string[]): LimitVerdict | Promise<LimitVerdict> {
    const requestCost = cost(req)
    if (typeof requestCost !== 'number') return requestCost.then((c) => withCost(req, res, requestKeys, c))
    return withCost(req, res, requestKeys, requestCost)
  }

  function decide(req: Req, res: Res, facts: RequestFacts): LimitVerdict | Promise<LimitVerdict> {
    const requestKeys = keys(req, facts)
    if (!Array.isArray(requestKeys)) return requestKeys.then((k) => withKeys(req, res, k))
    return withKeys(req, res, requestKeys)
  }

  /** The lists and `skip`, then the limit. */
  async function screened(req: Req, res: Res, facts: RequestFacts): Promise<LimitVerdict> {
    // The lists come first: a denied client learns nothing of the limits, an allowed one is not counted.
    if (denyList !== undefined && (await denyList(req, facts.ip)) === true) return FORBIDDEN
    if (allowList !== undefined && (await allowList(req, facts.ip)) === true) return SKIP
    if (skip !== undefined && (await skip(req)) === true) return SKIP
    return decide(req, res, facts)
  }

  /** Without lists or `skip`: the limit alone. A key or cost function's error rejects, as it does when awaited. */
  function limited(req: Req, res: Res, facts: RequestFacts): LimitVerdict | Promise<LimitVerdict> {
    try {
      return decide(req, res, facts)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  const screens = denyList !== undefined || allowList !== undefined || skip !== undefined
  return {
    limiter,
    perRequestLimits: limitsOf !== undefined,
    handle: screens ? screened : limited,
    async keysOf(req, facts) {
      return keys(req, facts)
    },
    async limiterOf(req) {
      return limiterOf(req)
    },
  }
}

/** What one request is charged: its keys (one per rule), its cost and the limiter of its limits. */
interface Charge {
  readonly keys: string[]
  readonly cost: number
  readonly limiter: Limiter
}

/** With a `refund` option: when an admitted response ends, asks it whether to give the cost back. */
function refunder<Req, Res>({ refund, rawResponse, logger }: HttpSettings<Req, Res>) {
  return function refundAfter(req: Req, res: Res, keys: string[], cost: number, limiter: Limiter): void {
    if (refund === undefined) return
    const settle = () => {
      Promise.resolve()
        .then(() => refund(req, res))
        .then((giveBack) => (giveBack === true ? limiter.refund(keys, cost) : undefined))
        .catch((error: unknown) => logger.error('sluice: refund failed', error))
    }
    // 'close' without 'finish' is a response cut short by the client; refund decides on it all the same.
    onResponseEnd(rawResponse(res), settle)
  }
}
