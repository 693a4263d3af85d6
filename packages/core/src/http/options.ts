import { checkFunction, checkObject, checkOneOf, isCost } from '../checks'
import type { Duration } from '../duration'
import { describe, InvalidOptionError } from '../errors'
import { createLimiter, type Limiter, type LimiterOptions } from '../limiter'
import { checkLogger, type Logger } from '../logger'
import type { RuleOptions } from '../rules'
import type { FailurePolicy, Store } from '../store'
import type { RuleLimits } from '../variants'
import { type HeaderMode, type HeadersOption, headerModes } from './headers'
import { checkIpv6Subnet } from './ip'
import { type AddressCheck, type AddressListOption, addressCheck } from './lists'
import { limitsOf, type RequestLimit, type RequestWindow, type RulePlans, takePlans } from './plans'

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
export interface HttpRuleOptions<Req> extends Omit<RuleOptions, 'limit' | 'window'> {
  key?: KeyFunction<Req>
  /** L (a bucket's capacity), or a function of the request returning it (or a promise of it), for plans. */
  limit: number | RequestLimit<Req>
  /** W, or a function of the request returning it (window algorithms only). */
  window?: Duration | RequestWindow<Req>
}

/**
 * The options every adapter's `rateLimit` takes (each adapter adds its own `onRejected`). `Req` and `Res` are the
 * framework's request and response (for Koa both are the context's: `ctx` and `ctx.res`).
 *
 * @example
 * const options: HttpLimitOptions<Request, Response> = {
 *   algorithm: 'token-bucket', limit: 30, window: '1m',
 *   cost: (req) => (req.path === '/export' ? 25 : 1),
 *   refund: (_req, res) => res.statusCode >= 500,
 * }
 */
export interface HttpLimitOptions<Req, Res>
  extends Omit<LimiterOptions, 'rules' | 'cost' | 'store' | 'limit' | 'window'> {
  /**
   * L per window (a bucket's capacity), or a function of the request returning it (or a promise of it), for plans:
   * a key whose limit changes keeps what it has used.
   */
  limit?: number | RequestLimit<Req>
  /** W, or a function of the request returning it (window algorithms only). */
  window?: Duration | RequestWindow<Req>
  /**
   * Addresses and CIDR blocks (IPv4 and IPv6), or a function of the request: these requests skip the limiter, neither
   * counted nor given headers. Default: none.
   */
  allowList?: AddressListOption<Req>
  /**
   * Addresses and CIDR blocks, or a function of the request: these requests are answered 403
   * `{"error":"forbidden"}` before anything else. Default: none.
   */
  denyList?: AddressListOption<Req>
  /** Stacked rules, each with its own `key`: a request must pass all of them and is charged to all or none. */
  rules?: readonly HttpRuleOptions<Req>[]
  /** Default: a new MemoryStore per `rateLimit`. A shared store needs a distinct `prefix` or `name` per limiter. */
  store?: Store
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
  onError?: Exclude<FailurePolicy, 'local'>
  /** Wall-clock ms, for the `'legacy'` reset time. Default `Date.now`. */
  clock?: () => number
}

/**
 * The raw Node response beneath a framework's response (Express `res`, Koa `ctx.res`, Fastify `reply.raw`): its end
 * runs `refund`.
 *
 * @example
 * const events: ResponseEvents = reply.raw
 */
export interface ResponseEvents {
  once(event: 'finish' | 'close', listener: () => void): unknown
}

/**
 * What an adapter tells the policy about its framework, once, when it builds the policy.
 *
 * @example
 * const fastify: HttpAdapter<FastifyReply> = { ownOptions: ['onRejected'], rawResponse: (reply) => reply.raw }
 */
export interface HttpAdapter<Res> {
  /** The adapter's own options beyond {@link HttpLimitOptions}, each a function when given (`onRejected`). */
  readonly ownOptions: readonly string[]
  /** The Node response beneath the framework's response, whose end runs `refund`. */
  rawResponse(res: Res): ResponseEvents
}

/** The options of one `rateLimit`, validated once into what `handle` reads. */
export interface HttpSettings<Req, Res> {
  readonly limiter: Limiter
  /** Per rule, the key function, or undefined for the client IP; and the option that gave it, for its errors. */
  readonly ruleKeys: readonly (KeyFunction<Req> | undefined)[]
  readonly ruleKeyOptions: readonly string[]
  /** The limits of a request whose rules have `limit` or `window` functions; undefined when none has. */
  readonly limitsOf: ((req: Req) => RuleLimits[] | Promise<RuleLimits[]>) | undefined
  readonly allowList: AddressCheck<Req> | undefined
  readonly denyList: AddressCheck<Req> | undefined
  readonly cost: number | ((req: Req) => number | Promise<number>)
  readonly skip: ((req: Req) => boolean | Promise<boolean>) | undefined
  readonly refund: ((req: Req, res: Res) => boolean | Promise<boolean>) | undefined
  readonly statusCode: number
  readonly onError: Exclude<FailurePolicy, 'local'>
  readonly logger: Logger
  readonly clock: () => number
  readonly headerModes: readonly HeaderMode[]
  readonly ipv6Subnet: number | false
  readonly rawResponse: (res: Res) => ResponseEvents
}

// Every option, so the compiler fails when one is added to HttpLimitOptions and not here.
const KNOWN_OPTIONS: { readonly [option in keyof HttpLimitOptions<unknown, unknown>]-?: true } = {
  algorithm: true,
  limit: true,
  window: true,
  rate: true,
  name: true,
  period: true,
  timeZone: true,
  block: true,
  rules: true,
  store: true,
  prefix: true,
  key: true,
  cost: true,
  skip: true,
  headers: true,
  statusCode: true,
  refund: true,
  ipv6Subnet: true,
  onError: true,
  logger: true,
  eventKeys: true,
  clock: true,
  allowList: true,
  denyList: true,
}

// The names other rate limiters (or earlier Sluice) use, so a migration mistake gets a pointer, not a silent default.
const RENAMED: Readonly<Record<string, string>> = {
  max: 'limit',
  windowMs: 'window',
  timeWindow: 'window',
  keyGenerator: 'key',
  handler: 'onRejected',
  standardHeaders: 'headers',
  legacyHeaders: 'headers',
  onStoreError: 'onError',
}

const LIMITER_OPTIONS = [
  'algorithm',
  'limit',
  'window',
  'rate',
  'name',
  'period',
  'timeZone',
  'block',
  'store',
  'prefix',
  'eventKeys',
] as const

/**
 * Validates the options of one `rateLimit` into frozen settings, and builds its limiter. Invalid options throw an
 * {@link InvalidOptionError} naming the option.
 */
export function httpSettings<Req, Res>(
  options: HttpLimitOptions<Req, Res>,
  adapter: HttpAdapter<Res>,
): HttpSettings<Req, Res> {
  checkObject(options, 'options')
  for (const name of Object.keys(options)) {
    if (Object.hasOwn(KNOWN_OPTIONS, name)) continue
    if (adapter.ownOptions.includes(name)) {
      checkFunction((options as Record<string, unknown>)[name], name)
      continue
    }
    const hint = RENAMED[name] === undefined ? '' : ` (use \`${RENAMED[name]}\`)`
    throw new InvalidOptionError(name, `is not an option of rateLimit${hint}`)
  }
  const { cost = 1 } = options
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
  const key = checkFunction<KeyFunction<Req>>(options.key, 'key')
  const logger = checkLogger(options.logger ?? console)
  const limiterOptions: LimiterOptions = { logger }
  for (const name of LIMITER_OPTIONS) {
    if (options[name] !== undefined) Object.assign(limiterOptions, { [name]: options[name] })
  }
  let ruleKeys = [key]
  let ruleKeyOptions = ['key']
  let plans: RulePlans<Req>
  if (options.rules !== undefined) {
    if (!Array.isArray(options.rules)) {
      throw new InvalidOptionError('rules', `must be a non-empty array of rules (got ${describe(options.rules)})`)
    }
    ruleKeys = options.rules.map((rule, i) => checkFunction<KeyFunction<Req>>(rule?.key, `rules[${i}].key`) ?? key)
    ruleKeyOptions = options.rules.map((rule, i) => (rule?.key === undefined ? 'key' : `rules[${i}].key`))
    const taken = takePlans<Req, HttpRuleOptions<Req>>(
      options.rules,
      options.rules.map((_, i) => `rules[${i}]`),
    )
    plans = taken.plans
    limiterOptions.rules = taken.rules.map((rule) => {
      if (rule === null || typeof rule !== 'object') return rule
      const { key: _key, ...ruleOptions } = rule
      return ruleOptions as RuleOptions
    })
  } else {
    const taken = takePlans<Req, LimiterOptions>([limiterOptions], [''])
    Object.assign(limiterOptions, taken.rules[0])
    plans = taken.plans
  }
  // Everything is checked before the limiter binds its store, so a mistake leaves nothing bound.
  const checked = {
    skip: checkFunction<HttpSettings<Req, Res>['skip']>(options.skip, 'skip'),
    refund: checkFunction<HttpSettings<Req, Res>['refund']>(options.refund, 'refund'),
    onError: checkOneOf(options.onError ?? 'closed', 'onError', ['open', 'closed'] as const),
    clock: checkFunction<() => number>(options.clock, 'clock') ?? Date.now,
    headerModes: headerModes(options.headers),
    ipv6Subnet: checkIpv6Subnet(options.ipv6Subnet),
    allowList: addressCheck<Req>(options.allowList, 'allowList'),
    denyList: addressCheck<Req>(options.denyList, 'denyList'),
  }
  const limiter = createLimiter(limiterOptions)
  return Object.freeze({
    ...checked,
    limiter,
    limitsOf: limitsOf(plans, limiter),
    ruleKeys,
    ruleKeyOptions,
    cost,
    statusCode,
    logger,
    rawResponse: adapter.rawResponse,
  })
}
