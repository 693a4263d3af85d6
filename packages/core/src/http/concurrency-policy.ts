import {
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
  createConcurrencyLimiter,
} from '../protect/concurrency'
import { checkErrorStatus, checkFunction, checkObject, checkOptionNames } from '../util/checks'
import { describe, InvalidOptionError } from '../util/errors'
import { checkLogger, type Logger } from '../util/logger'
import { NO_STORE, retryAfterSeconds } from './headers'
import { checkIpv6Subnet } from './ip'
import { clientKeys, type RequestFacts } from './keys'
import type { KeyFunction } from './limit-options'
import { type ResponseLifecycle, releaseAtEnd } from './response-end'
import { storeOutage } from './store-outage'
import { type HttpVerdict, PASS, type RequestPolicy } from './verdict'

/**
 * The options every adapter's `concurrencyLimit` takes. `Req` is the framework's request (Koa: the context).
 *
 * @example
 * const options: HttpConcurrencyOptions<Request> = { limit: 10, key: (req) => req.get('x-api-key') ?? req.ip ?? '' }
 */
export interface HttpConcurrencyOptions<Req> extends Omit<ConcurrencyLimiterOptions, 'timers'> {
  /** Whose requests are counted. Default: the client IP the framework reports, IPv6 per `ipv6Subnet`. */
  key?: KeyFunction<Req>
  /** Requests for which it returns true are not counted. */
  skip?: (req: Req) => boolean | Promise<boolean>
  /** The IPv6 prefix length that counts as one client. Default 64; false counts whole addresses. */
  ipv6Subnet?: number | false
  /** The status of a refusal. Default 429. */
  statusCode?: number
  /** A store error other than `StoreUnavailableError`: `'closed'` (default) answers 503, `'open'` admits. */
  onError?: 'open' | 'closed'
  /** Default `console`. */
  logger?: Logger
}

/**
 * The concurrency policy of one `concurrencyLimit`, built once; `handle` runs per request.
 *
 * @example
 * const policy: HttpConcurrencyPolicy<Request> = createConcurrencyPolicy({ limit: 10 })
 * console.log(policy.limiter.held)
 */
export interface HttpConcurrencyPolicy<Req> extends RequestPolicy<Req, ResponseLifecycle> {
  readonly limiter: ConcurrencyLimiter
  /** Takes a slot (released when the response ends or the client goes away), or answers 429. */
  handle(req: Req, res: ResponseLifecycle, facts: RequestFacts): Promise<HttpVerdict>
}

const UNAVAILABLE: HttpVerdict = {
  action: 'reject',
  status: 503,
  headers: [NO_STORE],
  body: { error: 'concurrency limiter unavailable' },
}

const OPTIONS = [
  'limit',
  'globalLimit',
  'lease',
  'store',
  'name',
  'prefix',
  'key',
  'skip',
  'ipv6Subnet',
  'statusCode',
  'onError',
  'logger',
]

/**
 * Builds the concurrency policy the adapters share: the key, the slot held until the response ends, the 429 with
 * Retry-After, and the store-failure policy. Invalid options throw an `InvalidOptionError` naming the option.
 *
 * @example
 * const policy = createConcurrencyPolicy<Request>({ limit: 10, key: (req) => req.get('x-api-key') ?? '' })
 * const verdict = await policy.handle(req, res, factsOf(req))
 */
export function createConcurrencyPolicy<Req>(options: HttpConcurrencyOptions<Req>): HttpConcurrencyPolicy<Req> {
  checkObject(options, 'options')
  checkOptionNames(options, OPTIONS, 'concurrencyLimit', { max: 'limit', keyGenerator: 'key', onStoreError: 'onError' })
  const { key, skip, logger = console, onError = 'closed' } = options
  checkFunction(key, 'key')
  checkFunction(skip, 'skip')
  const statusCode = checkErrorStatus(options.statusCode, 429)
  if (onError !== 'open' && onError !== 'closed') {
    throw new InvalidOptionError('onError', `must be 'open' or 'closed' (got ${describe(onError)})`)
  }
  checkLogger(logger)
  const ipv6Subnet = checkIpv6Subnet(options.ipv6Subnet)
  const {
    key: _key,
    skip: _skip,
    ipv6Subnet: _subnet,
    statusCode: _status,
    onError: _policy,
    logger: _logger,
    ...limiterOptions
  } = options
  const limiter = createConcurrencyLimiter(limiterOptions)
  // A global-only limiter counts every request under one key: the client's address is not even read.
  const perKey = options.limit !== undefined

  // The same client key as rateLimit's: the framework's proxy-aware address, and one warning per limiter for an
  // X-Forwarded-For it does not trust.
  const clientKeyOf = clientKeys(ipv6Subnet, logger)
  const keyOf = async (req: Req, facts: RequestFacts): Promise<string> => {
    if (!perKey) return ''
    if (key === undefined) return clientKeyOf(facts)
    const value = await key(req)
    if (typeof value !== 'string') {
      throw new TypeError(`sluice: option "key" must return a string (got ${describe(value)})`)
    }
    return value
  }

  const outage = storeOutage('concurrency', onError, logger)

  return {
    limiter,
    async handle(req, raw, facts) {
      if (skip !== undefined && (await skip(req)) === true) return PASS
      // Watch the response before the first await: a client that aborts while the store answers is seen.
      const end = releaseAtEnd(raw)
      const slotKey = await keyOf(req, facts)
      let slot: Awaited<ReturnType<ConcurrencyLimiter['acquire']>>
      try {
        slot = await limiter.acquire(slotKey)
        outage.answered()
      } catch (error) {
        return outage.failed(error) ? PASS : UNAVAILABLE
      }
      if (slot.allowed) {
        end.set(() => {
          slot.release().catch((error: unknown) => logger.error('sluice: releasing a concurrency slot failed', error))
        })
        return PASS
      }
      const retryAfter = retryAfterSeconds(slot)
      return {
        action: 'reject',
        status: statusCode,
        headers: [['Retry-After', String(retryAfter)], NO_STORE],
        body: { error: 'too many requests in flight', retryAfter },
      }
    },
  }
}
