import { createLimiter, type Limiter, type LimiterOptions } from '../limiter/limiter'
import type { RuleLimits } from '../limiter/variants'
import type { LimiterFields, RuleFields } from '../rules/fields'
import type { FailurePolicy } from '../store/store'
import { checkErrorStatus, checkFunction, checkObject, checkOneOf, checkOptionNames, isCost } from '../util/checks'
import { describe, InvalidOptionError } from '../util/errors'
import { checkLogger, type Logger } from '../util/logger'
import { type HeaderMode, headerModes } from './headers'
import { checkIpv6Subnet } from './ip'
import type { HttpCommonOptions, HttpLimitOptions, HttpRuleOptions, KeyFunction } from './limit-options'
import { type AddressCheck, addressCheck } from './lists'
import { limitsOf, type RulePlans, takePlans } from './plans'
import type { ResponseEvents } from './response-end'

export type { HttpLimitOptions, HttpRuleOptions, KeyFunction } from './limit-options'

/** The options of `rateLimit` as the runtime checks read them, whatever shape (or JavaScript) gave them. */
type HttpFields<Req, Res> = HttpCommonOptions<Req, Res> & RuleFields & { rules?: unknown }

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
  label: true,
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
  'label',
  'eventKeys',
] as const

/**
 * Validates the options of one `rateLimit` into frozen settings, and builds its limiter. Invalid options throw an
 * {@link InvalidOptionError} naming the option.
 */
export function httpSettings<Req, Res>(
  limitOptions: HttpLimitOptions<Req, Res>,
  adapter: HttpAdapter<Res>,
): HttpSettings<Req, Res> {
  const options: HttpFields<Req, Res> = limitOptions
  checkObject(options, 'options')
  checkOptionNames(options, [...Object.keys(KNOWN_OPTIONS), ...adapter.ownOptions], 'rateLimit', RENAMED)
  for (const name of adapter.ownOptions) checkFunction((options as Record<string, unknown>)[name], name)
  const { cost = 1 } = options
  if (typeof cost !== 'function' && !isCost(cost)) {
    throw new InvalidOptionError('cost', `must be a positive whole number or a function (got ${describe(cost)})`)
  }
  const statusCode = checkErrorStatus(options.statusCode, 429)
  const key = checkFunction<KeyFunction<Req>>(options.key, 'key')
  const logger = checkLogger(options.logger ?? console)
  const limiterOptions: LimiterFields = { logger }
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
      return ruleOptions as RuleFields
    })
  } else {
    const taken = takePlans<Req, LimiterFields>([limiterOptions], [''])
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
  const limiter = createLimiter(limiterOptions as LimiterOptions)
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
