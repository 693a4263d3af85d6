// The option types of every adapter's `rateLimit`: the limiter's shapes (../options.ts), with `limit` and `window`
// widened to functions of the request (plans), a `key` per stacked rule, and the HTTP options beside them.
import type { AlgorithmName } from '../algorithms'
import type { CalendarPeriodName } from '../calendar'
import type {
  BucketAlgorithmName,
  InheritedBucketRuleOptions,
  InsideEachRule,
  NotWithRules,
  QuotaRuleOptions,
  RateBucketRuleOptions,
  WindowRuleOptions,
} from '../limiter/options'
import type { FailurePolicy, Store } from '../store/store'
import type { Duration } from '../util/duration'
import type { EventKeys } from '../util/key-hash'
import type { Logger } from '../util/logger'
import type { HeadersOption } from './headers'
import type { AddressListOption } from './lists'
import type { RequestLimit, RequestWindow } from './plans'

/**
 * Derives a rate-limiting key (a user id, an API key, a tenant) from the framework's request.
 *
 * @example
 * const byApiKey: KeyFunction<Request> = (req) => req.get('x-api-key') ?? req.ip ?? 'anonymous'
 */
export type KeyFunction<Req> = (req: Req) => string | Promise<string>

/** L (a bucket's capacity), or a function of the request returning it (or a promise of it), for plans. */
type HttpLimit<Req> = number | RequestLimit<Req>
/** W, or a function of the request returning it (window algorithms only: a bucket's window sets its unit). */
type HttpWindow<Req> = Duration | RequestWindow<Req>

/**
 * The key of one stacked rule (default: the limiter's `key`, or the client IP).
 *
 * @example
 * const byTenant: RuleKey<Request> = { key: (req) => req.get('x-tenant') ?? 'none' }
 */
export interface RuleKey<Req> {
  key?: KeyFunction<Req>
}

/**
 * One stacked rule of an HTTP limiter, with the key it counts by; `limit` (and a window algorithm's `window`) may be
 * functions of the request.
 *
 * @example
 * const tenant: HttpRuleOptions<Request> = { name: 'tenant', limit: 2000, window: '1m', key: (req) => tenantOf(req) }
 */
export type HttpRuleOptions<Req> = RuleKey<Req> &
  (
    | QuotaRuleOptions<HttpLimit<Req>>
    | RateBucketRuleOptions<HttpLimit<Req>>
    | WindowRuleOptions<HttpLimit<Req>, HttpWindow<Req>>
  )

/**
 * The HTTP options of every adapter's `rateLimit`, whatever its rules. `Req` and `Res` are the framework's request
 * and response (for Koa both are the context's: `ctx` and `ctx.res`).
 *
 * @example
 * const common: HttpCommonOptions<Request, Response> = { key: (req) => req.user.id, headers: 'draft-7' }
 */
export interface HttpCommonOptions<Req, Res> {
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
  /** Default: a new MemoryStore per `rateLimit`. A shared store needs a distinct `prefix` or `name` per limiter. */
  store?: Store
  /** Put before every store key. Default `'sluice'`. */
  prefix?: string
  /**
   * What the limiter's events (`sluice:decision`, `sluice:store`) call it, as `limiter`: a name for metrics, such as
   * `'api'` or `'login'`. Default: the `prefix` (on Fastify, a route's own limit has a prefix of its own).
   */
  label?: string
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
  /**
   * Where Sluice reports what a developer should know: an untrusted X-Forwarded-For, store outages, two limiters
   * counting in the same keys. Default `console`.
   */
  logger?: Logger
  /** What the limiter's diagnostics-channel events say of keys: `'hash'` (default) or `'raw'` (see `EventKeys`). */
  eventKeys?: EventKeys
  /** Wall-clock ms, for the `'legacy'` reset time. Default `Date.now`. */
  clock?: () => number
}

/** The single-rule options an HTTP limiter with `rules` does not take. */
interface NoSingleRule {
  limit?: InsideEachRule
  window?: InsideEachRule
  rate?: InsideEachRule
  period?: InsideEachRule
  timeZone?: InsideEachRule
  block?: InsideEachRule
  name?: InsideEachRule
}

/**
 * Stacked rules, each with its own `key`: a request must pass all of them and is charged to all or none.
 *
 * @example
 * const options: HttpStackedLimitOptions<Request, Response> = { rules: [
 *   { name: 'user', limit: 100, window: '1m', key: (req) => req.user.id },
 *   { name: 'tenant', limit: 2000, window: '1m', key: (req) => req.user.tenant },
 * ] }
 */
export interface HttpStackedLimitOptions<Req, Res> extends HttpCommonOptions<Req, Res>, NoSingleRule {
  /** The algorithm of each rule that names none. Default `'sliding-window'`. */
  algorithm?: AlgorithmName
  rules: readonly HttpRuleOptions<Req>[]
}

/**
 * Stacked rules that are buckets unless they say otherwise.
 *
 * @example
 * const options: HttpStackedBucketLimitOptions<Request, Response> = {
 *   algorithm: 'token-bucket', rules: [{ name: 'user', limit: 10, rate: 1 }],
 * }
 */
export interface HttpStackedBucketLimitOptions<Req, Res> extends HttpCommonOptions<Req, Res>, NoSingleRule {
  algorithm: BucketAlgorithmName
  rules: readonly (HttpRuleOptions<Req> | (RuleKey<Req> & InheritedBucketRuleOptions<HttpLimit<Req>>))[]
}

/**
 * One quota over HTTP: `limit` per calendar day or month.
 *
 * @example
 * const options: HttpQuotaLimitOptions<Request, Response> = { limit: 1000, period: 'day', timeZone: 'Europe/Paris' }
 */
export interface HttpQuotaLimitOptions<Req, Res> extends HttpCommonOptions<Req, Res>, QuotaRuleOptions<HttpLimit<Req>> {
  rules?: NotWithRules
}

/**
 * One bucket over HTTP that refills at `rate` per second.
 *
 * @example
 * const options: HttpRateBucketLimitOptions<Request, Response> = { algorithm: 'token-bucket', limit: 30, rate: 0.5 }
 */
export interface HttpRateBucketLimitOptions<Req, Res>
  extends HttpCommonOptions<Req, Res>,
    RateBucketRuleOptions<HttpLimit<Req>> {
  rules?: NotWithRules
}

/**
 * One rule over HTTP of `limit` per `window` (by any algorithm), either a function of the request (plans; a bucket's
 * window cannot be one: it sets the unit its state counts in).
 *
 * @example
 * const options: HttpWindowLimitOptions<Request, Response> = { limit: (req) => (req.user?.pro ? 1000 : 100), window: '1m' }
 */
export interface HttpWindowLimitOptions<Req, Res>
  extends HttpCommonOptions<Req, Res>,
    WindowRuleOptions<HttpLimit<Req>, HttpWindow<Req>> {
  rules?: NotWithRules
}

/**
 * The options every adapter's `rateLimit` takes (each adapter adds its own `onRejected`): one rule given inline (a
 * window, a bucket or a quota), or several in `rules`. (The window shape is last on purpose: tsc reports a mistake
 * that fits no shape against the last one.)
 *
 * @example
 * const options: HttpLimitOptions<Request, Response> = {
 *   algorithm: 'token-bucket', limit: 30, window: '1m',
 *   cost: (req) => (req.path === '/export' ? 25 : 1),
 *   refund: (_req, res) => res.statusCode >= 500,
 * }
 */
export type HttpLimitOptions<Req, Res> =
  | HttpStackedLimitOptions<Req, Res>
  | HttpStackedBucketLimitOptions<Req, Res>
  | HttpQuotaLimitOptions<Req, Res>
  | HttpRateBucketLimitOptions<Req, Res>
  | HttpWindowLimitOptions<Req, Res>

/**
 * The rule options as defaults that a later limit completes (Fastify's plugin options with `global: false`, which
 * its routes' `config.rateLimit` complete): each optional, checked when the limit they end up in is built.
 *
 * @example
 * const defaults: HttpRuleDefaults<Request> = { window: '1m', algorithm: 'sliding-log' }
 */
export interface HttpRuleDefaults<Req> {
  algorithm?: AlgorithmName
  limit?: HttpLimit<Req>
  window?: HttpWindow<Req>
  rate?: number
  period?: CalendarPeriodName
  timeZone?: string
  block?: Duration
  name?: string
  rules?: readonly HttpRuleOptions<Req>[]
}
