import type { AlgorithmName } from '../algorithms'
import type { Duration } from '../duration'
import { describe, InvalidOptionError, StoreUnavailableError } from '../errors'
import { createLimiter, type Decision, type Limiter, type LimiterOptions } from '../limiter'
import type { RuleOptions } from '../rules'
import type { Store } from '../store'
import { type HeaderList, type HeadersOption, headerModes, rateLimitHeaders, retryAfterSeconds } from './headers'
import { checkIpv6Subnet, ipKey } from './ip'

/**
 * Where the HTTP layer reports what a developer should know: one spoofable header, one store outage.
 *
 * @example
 * rateLimit({ limit: 100, window: '1m', logger: { warn: (m) => log.warn(m), error: (m, e) => log.error(m, e) } })
 */
export interface Logger {
  warn(message: string): void
  error(message: string, error?: unknown): void
}

/**
 * Derives a rate-limiting key (a user id, an API key, a tenant) from the framework's request.
 *
 * @example
 * const byApiKey: KeyFunction<Request> = (req) => req.get('x-api-key') ?? req.ip ?? 'anonymous'
 */
export type KeyFunction<Req> = (req: Req) => string | Promise<string>

/**
 * One stacked rule of an HTTP limiter, with the key it counts by (default: the limiter's `key`, or the client IP).
 *
 * @example
 * const tenant: HttpRuleOptions<Request> = { name: 'tenant', limit: 2000, window: '1m', key: (req) => tenantOf(req) }
 */
export interface HttpRuleOptions<Req> extends RuleOptions {
  key?: KeyFunction<Req>
}

/**
 * The options every adapter's `rateLimit` takes. `Req` and `Res` are the framework's request and response (for
 * Koa both are the context's: `ctx` and `ctx.res`).
 *
 * @example
 * const options: HttpLimitOptions<Request, Response> = {
 *   algorithm: 'token-bucket', limit: 30, window: '1m',
 *   cost: (req) => (req.path === '/export' ? 25 : 1),
 *   refund: (_req, res) => res.statusCode >= 500,
 * }
 */
export interface HttpLimitOptions<Req, Res> {
  /** Default `'sliding-window'`. */
  algorithm?: AlgorithmName
  /** Requests (or units of cost) per window; the capacity of a bucket. */
  limit?: number
  /** The window: ms or `'1m'`. */
  window?: Duration
  /** Buckets only: tokens per second. */
  rate?: number
  /** The rule's name in the headers. Default `'default'`. */
  name?: string
  /** Stacked rules, each with its own `key`: a request must pass all of them and is charged to all or none. */
  rules?: readonly HttpRuleOptions<Req>[]
  /** Default: a new MemoryStore per `rateLimit`. A shared store needs a distinct `prefix` or `name` per limiter. */
  store?: Store
  /** Default `'sluice'`. */
  prefix?: string
  /** Default: the client IP the framework reports (proxy-aware), IPv6 grouped per `ipv6Subnet`. */
  key?: KeyFunction<Req>
  /** Default 1. A positive whole number, or a function of the request returning one (or a promise of one). */
  cost?: number | ((req: Req) => number | Promise<number>)
  /** Requests for which it returns true are neither counted nor given headers. */
  skip?: (req: Req) => boolean | Promise<boolean>
  /** Default `'ietf'`. */
  headers?: HeadersOption
  /** The status of a rejection. Default 429. */
  statusCode?: number
  /** Called when an admitted response has ended; returning true gives its cost back (e.g. for failures). */
  refund?: (req: Req, res: Res) => boolean | Promise<boolean>
  /** The IPv6 prefix length that counts as one client. Default 64; false counts whole addresses. */
  ipv6Subnet?: number | false
  /**
   * What a store error other than `StoreUnavailableError` does: `'closed'` (default) answers 503, `'open'` admits
   * without counting. A `StoreUnavailableError` (a store that chose to fail closed) always answers 503.
   */
  onStoreError?: 'open' | 'closed'
  /** Default `console`. */
  logger?: Logger
  /** Wall-clock ms, for the `'legacy'` reset time. Default `Date.now`. */
  clock?: () => number
}

/**
 * What an adapter reads from its framework's request for the policy.
 *
 * @example
 * const facts: RequestFacts = {
 *   ip: ctx.ip, method: ctx.method, path: ctx.path, headers: ctx.headers, trustsProxy: () => ctx.app.proxy,
 * }
 */
export interface RequestFacts {
  /** The framework's proxy-aware client address (`req.ip`, `ctx.ip`, `request.ip`). */
  readonly ip: string | undefined
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /**
   * Whether the framework took the client address from X-Forwarded-For for this request (its trust-proxy setting).
   * A function, since it is asked only when the header is there (Express computes it anew on every read).
   */
  trustsProxy(): boolean
}

/**
 * The raw Node response (Express `res`, Koa `ctx.res`, Fastify `reply.raw`): its end runs `refund`.
 *
 * @example
 * await policy.handle(request, reply, facts, reply.raw satisfies ResponseEvents)
 */
export interface ResponseEvents {
  once(event: 'finish' | 'close', listener: () => void): unknown
}

/**
 * The JSON body of a response the limiter wrote.
 *
 * @example
 * const body: RejectionBody = { error: 'rate limit exceeded', retryAfter: 18 }
 */
export interface RejectionBody {
  readonly error: string
  /** Seconds, as in Retry-After (429 only). */
  readonly retryAfter?: number
  /** The request's cost and the limit it can never fit (cost above capacity only). */
  readonly cost?: number
  readonly limit?: number
}

/**
 * What the adapter does with a request. `headers` go on the response either way.
 *
 * @example
 * const verdict: HttpVerdict = await policy.handle(req, res, facts, res)
 * if (verdict.action === 'reject') console.log(verdict.reason, verdict.status)
 */
export type HttpVerdict =
  | { readonly action: 'skip' }
  | {
      readonly action: 'pass'
      /** Undefined when the store failed and `onStoreError` is 'open'. */
      readonly decision: Decision | undefined
      readonly headers: HeaderList
    }
  | {
      readonly action: 'reject'
      /** 'rate-limited' is the one a custom `onRejected` answers. */
      readonly reason: 'rate-limited' | 'cost-exceeds-capacity' | 'store-unavailable'
      readonly status: number
      readonly decision: Decision | undefined
      readonly headers: HeaderList
      readonly body: RejectionBody
    }

/**
 * The HTTP policy of one `rateLimit`, built once at construction; `handle` runs per request.
 *
 * @example
 * const policy: HttpPolicy<Request, Response> = createHttpPolicy({ limit: 100, window: '1m' })
 * await policy.limiter.reset('192.0.2.1')
 */
export interface HttpPolicy<Req, Res> {
  readonly limiter: Limiter
  handle(req: Req, res: Res, facts: RequestFacts, raw: ResponseEvents): Promise<HttpVerdict>
}

/**
 * The status of a request whose cost can never fit (above the capacity of a rule): 413 Content Too Large, since
 * the request is larger than the server will ever accept under this limit (RFC 9110 s15.5.14), without Retry-After
 * because waiting does not help.
 */
const COST_EXCEEDS_CAPACITY_STATUS = 413

/** 503: the limiter could not decide, so the client is told to come back, not that it is over its limit. */
const STORE_UNAVAILABLE_STATUS = 503

const CORE_OPTIONS = [
  'algorithm',
  'limit',
  'window',
  'rate',
  'name',
  'rules',
  'store',
  'prefix',
  'key',
  'cost',
  'skip',
  'headers',
  'statusCode',
  'refund',
  'ipv6Subnet',
  'onStoreError',
  'logger',
  'clock',
  // Each adapter types its own (the framework's request and response), but the check is the same.
  'onRejected',
]

// The names other rate limiters use, so a migration mistake gets a pointer rather than a silent default.
const RENAMED: Readonly<Record<string, string>> = {
  max: 'limit',
  windowMs: 'window',
  timeWindow: 'window',
  keyGenerator: 'key',
  handler: 'onRejected',
  standardHeaders: 'headers',
  legacyHeaders: 'headers',
}

const NO_STORE = ['Cache-Control', 'no-store'] as const

/**
 * Builds the HTTP policy the adapters share: keys, cost, skip, stacked rules, status, headers, body, refund and
 * the store-failure policy. An adapter passes its framework's facts in and writes the verdict out. Invalid options
 * throw an {@link InvalidOptionError} naming the option; `adapterOptions` are the adapter's own option names (an
 * `onRejected` is checked to be a function here, and called by the adapter with the framework's arguments).
 *
 * @example
 * const policy = createHttpPolicy<Request, Response>({ limit: 100, window: '1m' })
 * const verdict = await policy.handle(req, res, { ip: req.ip, method, path, headers, trustsProxy: () => false }, res)
 * if (verdict.action === 'reject') send(verdict.status, verdict.headers, verdict.body)
 */
export function createHttpPolicy<Req, Res>(
  options: HttpLimitOptions<Req, Res>,
  adapterOptions: readonly string[] = [],
): HttpPolicy<Req, Res> {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', `must be an object (got ${describe(options)})`)
  }
  for (const name of Object.keys(options)) {
    if (CORE_OPTIONS.includes(name) || adapterOptions.includes(name)) continue
    const hint = RENAMED[name] === undefined ? '' : ` (use \`${RENAMED[name]}\`)`
    throw new InvalidOptionError(name, `is not an option of rateLimit${hint}`)
  }
  const { key, cost = 1, skip, refund, logger = console, clock = Date.now, onStoreError = 'closed' } = options
  checkFunction(key, 'key')
  checkFunction(skip, 'skip')
  checkFunction(refund, 'refund')
  checkFunction(clock, 'clock')
  checkFunction((options as { onRejected?: unknown }).onRejected, 'onRejected')
  if (typeof cost !== 'function' && !isCost(cost)) {
    throw new InvalidOptionError('cost', `must be a positive whole number or a function (got ${describe(cost)})`)
  }
  const statusCode = options.statusCode ?? 429
  if (!Number.isInteger(statusCode) || statusCode < 400 || statusCode > 599) {
    throw new InvalidOptionError(
      'statusCode',
      `must be an HTTP error status from 400 to 599 (got ${describe(statusCode)})`,
    )
  }
  if (onStoreError !== 'open' && onStoreError !== 'closed') {
    throw new InvalidOptionError('onStoreError', `must be 'open' or 'closed' (got ${describe(onStoreError)})`)
  }
  if (
    logger === null ||
    typeof logger !== 'object' ||
    typeof logger.warn !== 'function' ||
    typeof logger.error !== 'function'
  ) {
    throw new InvalidOptionError('logger', `must have warn() and error() methods (got ${describe(logger)})`)
  }
  const modes = headerModes(options.headers)
  const ipv6Subnet = checkIpv6Subnet(options.ipv6Subnet)

  const limiterOptions: LimiterOptions = {}
  for (const name of ['algorithm', 'limit', 'window', 'rate', 'name', 'store', 'prefix'] as const) {
    if (options[name] !== undefined) Object.assign(limiterOptions, { [name]: options[name] })
  }
  let ruleKeys: (KeyFunction<Req> | undefined)[] = [key]
  if (options.rules !== undefined) {
    if (!Array.isArray(options.rules)) {
      throw new InvalidOptionError('rules', `must be a non-empty array of rules (got ${describe(options.rules)})`)
    }
    ruleKeys = options.rules.map((rule, i) => {
      const ruleKey = rule?.key
      checkFunction(ruleKey, `rules[${i}].key`)
      return ruleKey ?? key
    })
    limiterOptions.rules = options.rules.map((rule) => {
      if (rule === null || typeof rule !== 'object') return rule
      const { key: _key, ...ruleOptions } = rule
      return ruleOptions
    })
  }
  const limiter = createLimiter(limiterOptions)
  if (options.store !== undefined) warnOfSharedKeys(options.store, limiter, logger)
  const usesIp = ruleKeys.some((ruleKey) => ruleKey === undefined)
  let warnedForwarded = false
  let storeFailing = false

  const warnOfForwarding = (facts: RequestFacts): void => {
    if (warnedForwarded || facts.headers['x-forwarded-for'] === undefined || facts.trustsProxy()) return
    // Once per limiter: the header is either a spoof, or a proxy the app forgot to trust (so every client
    // behind it shares one limit). Either way the developer needs to hear it, but not on every request.
    warnedForwarded = true
    logger.warn(
      `sluice: ${facts.method} ${facts.path} came with X-Forwarded-For, but the framework does not trust the ` +
        `proxy, so it is keyed by the connection's address (${facts.ip}). Behind a proxy, enable trust proxy.`,
    )
  }

  const checkKeys = (values: readonly unknown[]): string[] => {
    values.forEach((value, i) => {
      if (typeof value === 'string') return
      const option = options.rules !== undefined && options.rules[i]?.key !== undefined ? `rules[${i}].key` : 'key'
      throw new TypeError(`sluice: option "${option}" must return a string (got ${describe(value)})`)
    })
    return values as string[]
  }

  const keysOf = (req: Req, facts: RequestFacts): MaybePromise<string[]> => {
    if (usesIp) warnOfForwarding(facts)
    const values = ruleKeys.map((ruleKey) => (ruleKey === undefined ? ipKey(facts.ip, ipv6Subnet) : ruleKey(req)))
    // Only a key function that is asynchronous costs a promise; the IP key never does.
    return values.some(isPromise) ? Promise.all(values).then(checkKeys) : checkKeys(values)
  }

  const costOf = (req: Req): MaybePromise<number> => {
    if (typeof cost !== 'function') return cost
    return then(cost(req), (value) => {
      if (!isCost(value)) {
        throw new TypeError(`sluice: option "cost" must return a positive whole number (got ${describe(value)})`)
      }
      return value
    })
  }

  const storeFailed = (error: unknown): HttpVerdict => {
    if (!storeFailing) {
      // Once per outage: a down store would otherwise log on every request.
      storeFailing = true
      logger.error(
        'sluice: the rate-limit store failed; until it answers, requests are ' +
          (error instanceof StoreUnavailableError || onStoreError === 'closed' ? 'answered 503' : 'admitted uncounted'),
        error,
      )
    }
    if (!(error instanceof StoreUnavailableError) && onStoreError === 'open') {
      return { action: 'pass', decision: undefined, headers: [] }
    }
    return {
      action: 'reject',
      reason: 'store-unavailable',
      status: STORE_UNAVAILABLE_STATUS,
      decision: undefined,
      headers: [NO_STORE],
      body: { error: 'rate limiter unavailable' },
    }
  }

  const refundAfter = (req: Req, res: Res, raw: ResponseEvents, keys: string[], charged: number): void => {
    if (refund === undefined) return
    let settled = false
    const settle = () => {
      if (settled) return
      settled = true
      Promise.resolve()
        .then(() => refund(req, res))
        .then((giveBack) => (giveBack === true ? limiter.refund(keys, charged) : undefined))
        .catch((error: unknown) => logger.error('sluice: refund failed', error))
    }
    // 'close' without 'finish' is a response cut short by the client; refund decides on it all the same.
    raw.once('finish', settle)
    raw.once('close', settle)
  }

  const verdictOf = (decision: Decision, charged: number, admitted: () => void): HttpVerdict => {
    const headers = rateLimitHeaders(decision, modes, clock())
    if (decision.allowed) {
      admitted()
      return { action: 'pass', decision, headers }
    }
    if (decision.costExceedsCapacity) {
      return {
        action: 'reject',
        reason: 'cost-exceeds-capacity',
        status: COST_EXCEEDS_CAPACITY_STATUS,
        decision,
        headers: [...headers, NO_STORE],
        body: { error: 'request cost exceeds the rate limit', cost: charged, limit: decision.limit },
      }
    }
    const retryAfter = retryAfterSeconds(decision)
    return {
      action: 'reject',
      reason: 'rate-limited',
      status: statusCode,
      decision,
      // RFC 6585 s4 and RFC 9111 s5.2.2.5: a 429 describes this moment, so no cache may store and replay it.
      headers: [...headers, ['Retry-After', String(retryAfter)], NO_STORE],
      body: { error: 'rate limit exceeded', retryAfter },
    }
  }

  return {
    limiter,
    handle(req, res, facts, raw) {
      try {
        const verdict = then(skip === undefined ? false : skip(req), (skipped) =>
          skipped === true
            ? SKIP
            : then(keysOf(req, facts), (keys) =>
                then(costOf(req), (charged) =>
                  limiter.consume(keys, charged).then((decision) => {
                    storeFailing = false
                    return verdictOf(decision, charged, () => refundAfter(req, res, raw, keys, charged))
                  }, storeFailed),
                ),
              ),
        )
        return Promise.resolve(verdict)
      } catch (error) {
        return Promise.reject(error)
      }
    },
  }
}

/**
 * How an adapter writes a verdict in its framework's terms. `rejected` is the user's custom `onRejected`, if any:
 * it answers rate-limit rejections only (not a cost above capacity or a store failure, which are not the client's
 * pace), after the headers are set.
 *
 * @example
 * const writer: VerdictWriter<void> = {
 *   next,
 *   decision: (decision) => { req.rateLimit = decision },
 *   header: (name, value) => res.setHeader(name, value),
 *   send: (status, body) => { res.status(status).json(body) },
 * }
 */
export interface VerdictWriter<T> {
  /** Let the request go on (skipped, or admitted). */
  next(): T
  /** Put the decision on the request for the handler. */
  decision(decision: Decision): void
  header(name: string, value: string): void
  rejected?: ((decision: Decision) => T) | undefined
  /** Answer the request with a JSON body. */
  send(status: number, body: RejectionBody): T
}

/**
 * Carries a verdict out through an adapter's writer, in the same order for every framework: the decision on the
 * request, the headers, then on, or the custom rejection, or the policy's own response.
 *
 * @example
 * const verdict = await policy.handle(ctx, ctx.res, facts, ctx.res)
 * return writeVerdict(verdict, { next, decision, header, send })
 */
export function writeVerdict<T>(verdict: HttpVerdict, writer: VerdictWriter<T>): T {
  if (verdict.action === 'skip') return writer.next()
  if (verdict.decision !== undefined) writer.decision(verdict.decision)
  for (const [name, value] of verdict.headers) writer.header(name, value)
  if (verdict.action === 'pass') return writer.next()
  if (writer.rejected !== undefined && verdict.reason === 'rate-limited' && verdict.decision !== undefined) {
    return writer.rejected(verdict.decision)
  }
  return writer.send(verdict.status, verdict.body)
}

type MaybePromise<T> = T | Promise<T>

// The key prefixes each explicitly given store counts under, across the limiters of this process.
const prefixesInUse = new WeakMap<Store, Set<string>>()

/**
 * A route limiter mounted with the same store, prefix and rule name as the global one would share its counts,
 * silently: say so once, at construction.
 */
function warnOfSharedKeys(store: Store, limiter: Limiter, logger: Logger): void {
  let taken = prefixesInUse.get(store)
  if (taken === undefined) {
    taken = new Set()
    prefixesInUse.set(store, taken)
  }
  for (const rule of limiter.rules) {
    if (taken.has(rule.keyPrefix)) {
      logger.warn(
        `sluice: another rateLimit on this store already counts under "${rule.prefix}:${rule.name}", so the two ` +
          'share their counts. Give each its own `name` or `prefix`, or mount one rateLimit in both places.',
      )
    }
    taken.add(rule.keyPrefix)
  }
}

const SKIP: HttpVerdict = Object.freeze({ action: 'skip' })

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as Promise<unknown> | null)?.then === 'function'
}

/** Continues with a value that may or may not be a promise, without a microtask when it is not. */
function then<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return isPromise(value) ? value.then(next) : next(value)
}

function checkFunction(value: unknown, option: string): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new InvalidOptionError(option, `must be a function (got ${describe(value)})`)
  }
}

function isCost(cost: unknown): cost is number {
  return typeof cost === 'number' && Number.isSafeInteger(cost) && cost > 0
}
