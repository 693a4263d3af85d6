import type { Limiter } from '../limiter/limiter'
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
  handle(req: Req, res: Res, facts: RequestFacts): Promise<LimitVerdict>
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

  return {
    limiter,
    perRequestLimits: limitsOf !== undefined,
    async handle(req, res, facts) {
      // The lists come first: a denied client learns nothing of the limits, an allowed one is not counted.
      if (denyList !== undefined && (await denyList(req, facts.ip)) === true) return FORBIDDEN
      if (allowList !== undefined && (await allowList(req, facts.ip)) === true) return SKIP
      if (skip !== undefined && (await skip(req)) === true) return SKIP
      // Awaited only when a key, cost or limit function was asynchronous: an await costs a turn of the microtask queue.
      let requestKeys = keys(req, facts)
      if (!Array.isArray(requestKeys)) requestKeys = await requestKeys
      let requestCost = cost(req)
      if (typeof requestCost !== 'number') requestCost = await requestCost
      let requestLimiter = limiterOf(req)
      if (requestLimiter instanceof Promise) requestLimiter = await requestLimiter
      let decision: Decision
      try {
        decision = await requestLimiter.consume(requestKeys, requestCost)
      } catch (error) {
        return outage.failed(error) ? PASS_UNCOUNTED : STORE_UNAVAILABLE
      }
      outage.answered()
      if (decision.allowed) refundAfter(req, res, requestKeys, requestCost, requestLimiter)
      return verdictOf(decision, requestCost, verdictSettings, settings.rawResponse(res))
    },
    async keysOf(req, facts) {
      return keys(req, facts)
    },
    async limiterOf(req) {
      return limiterOf(req)
    },
  }
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
