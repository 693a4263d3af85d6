// express-rate-limit's runtime checks (`validate`): each looks once, at its first chance, and a failure is logged,
// never thrown, so a warning cannot take a service down. They carry express-rate-limit's codes, so that a log
// filter written for them keeps matching. What is wrong with the options themselves throws at construction instead
// (see options.ts).
import { isIP } from 'node:net'
import type { Request } from 'express'
import type { EnabledValidations, Logger, ValidationName } from './types'

/**
 * A misconfiguration found by a check of `validate`, logged with `logger.error`.
 *
 * @example
 * logger.error(new ValidationError('ERR_ERL_PERMISSIVE_TRUST_PROXY', "'trust proxy' is true"))
 */
export class ValidationError extends Error {
  override readonly name: string = 'ValidationError'
  constructor(
    /** express-rate-limit's code for the same finding (`ERR_ERL_...`, `WRN_ERL_...`). */
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/**
 * A finding about a change of behaviour, logged with `logger.warn`.
 *
 * @example
 * logger.warn(new ChangeWarning('WRN_ERL_MAX_ZERO', 'limit 0 refuses every request'))
 */
export class ChangeWarning extends ValidationError {
  override readonly name: string = 'ChangeWarning'
}

/** The checks, by name. */
export const VALIDATION_NAMES: readonly ValidationName[] = [
  'ip',
  'trustProxy',
  'xForwardedForHeader',
  'forwardedHeader',
  'positiveHits',
  'unsharedStore',
  'singleCount',
  'limit',
  'draftPolliHeaders',
  'onLimitReached',
  'headersDraftVersion',
  'headersResetTime',
  'knownOptions',
  'validationsConfig',
  'creationStack',
  'ipv6Subnet',
  'ipv6SubnetOrKeyGenerator',
  'keyGeneratorIpFallback',
  'windowMs',
]

/** Store instances in use by a limiter, for `unsharedStore`. */
const storesInUse = new WeakSet<object>()
/** The keys each request was counted under, per store, for `singleCount`. */
const countedKeys = new WeakMap<Request, Map<unknown, Set<string>>>()

/** One limiter's checks: each runs the first time it is asked (if enabled) and never again. */
export class Validations {
  private readonly pending: Record<string, boolean>

  constructor(
    enabled: EnabledValidations,
    private readonly logger: Logger,
  ) {
    const fallback = enabled.default ?? true
    this.pending = {}
    for (const name of VALIDATION_NAMES) this.pending[name] = enabled[name] ?? fallback
  }

  /** Whether check `name` is still to run; asking uses it up. */
  private due(name: ValidationName): boolean {
    if (this.pending[name] !== true) return false
    this.pending[name] = false
    return true
  }

  private report(finding: ValidationError): void {
    if (finding instanceof ChangeWarning) this.logger.warn(finding)
    else this.logger.error(finding)
  }

  /** Whether a check is on (without using it up), for the construction-time checks that throw. */
  enabled(name: ValidationName): boolean {
    return this.pending[name] === true
  }

  /** The default key generator's look at the request: its address and the proxy settings behind it. */
  request(req: Request): void {
    if (this.due('ip')) {
      if (req.ip === undefined) {
        this.report(
          new ValidationError(
            'ERR_ERL_UNDEFINED_IP_ADDRESS',
            'req.ip is undefined: the connection may have closed already, or the server reports no addresses.',
          ),
        )
      } else if (isIP(req.ip) === 0) {
        this.report(
          new ValidationError(
            'ERR_ERL_INVALID_IP_ADDRESS',
            `req.ip (${req.ip}) is not an IP address; give a keyGenerator that finds the client.`,
          ),
        )
      }
    }
    if (this.due('trustProxy') && req.app.get('trust proxy') === true) {
      this.report(
        new ValidationError(
          'ERR_ERL_PERMISSIVE_TRUST_PROXY',
          "Express's 'trust proxy' is true: any client can choose its address in X-Forwarded-For and escape the limit.",
        ),
      )
    }
    if (this.due('xForwardedForHeader') && req.headers['x-forwarded-for'] && req.app.get('trust proxy') === false) {
      this.report(
        new ValidationError(
          'ERR_ERL_UNEXPECTED_X_FORWARDED_FOR',
          "X-Forwarded-For is set but Express's 'trust proxy' is off (the default): every client behind the proxy " +
            'is counted as the proxy.',
        ),
      )
    }
    if (this.due('forwardedHeader') && req.headers.forwarded && req.ip === req.socket?.remoteAddress) {
      this.report(
        new ValidationError(
          'ERR_ERL_FORWARDED_HEADER',
          'The Forwarded header is set but Express does not read it; give a keyGenerator that does.',
        ),
      )
    }
  }

  /** The prefix length an `ipv6Subnet` function answered. */
  ipv6Subnet(subnet: unknown): void {
    if (!this.due('ipv6Subnet')) return
    if (subnet !== false && (!Number.isInteger(subnet) || (subnet as number) < 32 || (subnet as number) > 64)) {
      this.report(
        new ValidationError(
          'ERR_ERL_IPV6_SUBNET',
          `ipv6Subnet answered ${String(subnet)}, not a prefix length from 32 to 64.`,
        ),
      )
    }
  }

  /** A store's hit count must be a positive whole number. */
  positiveHits(hits: unknown): void {
    if (!this.due('positiveHits')) return
    if (typeof hits !== 'number' || hits < 1 || hits !== Math.round(hits)) {
      this.report(
        new ValidationError(
          'ERR_ERL_INVALID_HITS',
          `The store answered a totalHits of ${String(hits)}, not a positive whole number.`,
        ),
      )
    }
  }

  /** One store instance per limiter. */
  unsharedStore(store: object & { localKeys?: boolean }): void {
    if (!this.due('unsharedStore')) return
    if (storesInUse.has(store)) {
      this.report(
        new ValidationError(
          'ERR_ERL_STORE_REUSE',
          `A store instance is shared by two rate limiters: create one ${store.constructor.name}` +
            `${store.localKeys ? '' : ' (with its own prefix)'} per limiter.`,
        ),
      )
    }
    storesInUse.add(store)
  }

  /** One count per key per request, per store (or store class, for stores whose keys are shared). */
  singleCount(req: Request, store: object & { localKeys?: boolean; prefix?: string }, key: string): void {
    if (!this.due('singleCount')) return
    let stores = countedKeys.get(req)
    if (stores === undefined) {
      stores = new Map()
      countedKeys.set(req, stores)
    }
    const space = store.localKeys ? store : store.constructor.name
    let keys = stores.get(space)
    if (keys === undefined) {
      keys = new Set()
      stores.set(space, keys)
    }
    const stored = `${store.prefix ?? ''}${key}`
    if (keys.has(stored)) {
      this.report(new ValidationError('ERR_ERL_DOUBLE_COUNT', `The key ${key} was counted twice for one request.`))
    }
    keys.add(stored)
  }

  /** `limit: 0` refuses every request (it disabled the limit before express-rate-limit 7). */
  limit(limit: number): void {
    if (this.due('limit') && limit === 0) {
      this.report(new ChangeWarning('WRN_ERL_MAX_ZERO', 'A limit of 0 refuses every request.'))
    }
  }

  /** draft-7 and draft-8 need the store's reset time. */
  headersResetTime(resetTime: Date | undefined): void {
    if (this.due('headersResetTime') && resetTime === undefined) {
      this.report(
        new ValidationError(
          'ERR_ERL_HEADERS_NO_RESET',
          'standardHeaders draft-7 and draft-8 need a resetTime, and the store gave none: the whole window is sent.',
        ),
      )
    }
  }

  /** Options express-rate-limit 7 removed. */
  removedOptions(options: Record<string, unknown>): void {
    if (this.due('draftPolliHeaders') && options['draft_polli_ratelimit_headers']) {
      this.report(
        new ChangeWarning(
          'WRN_ERL_DEPRECATED_DRAFT_POLLI_HEADERS',
          "draft_polli_ratelimit_headers was removed in express-rate-limit 7: set standardHeaders: 'draft-6'.",
        ),
      )
    }
    if (this.due('onLimitReached') && options['onLimitReached']) {
      this.report(
        new ChangeWarning(
          'WRN_ERL_DEPRECATED_ON_LIMIT_REACHED',
          'onLimitReached was removed in express-rate-limit 7: it is never called.',
        ),
      )
    }
  }

  /** A keyGenerator that reads req.ip without ipKeyGenerator counts each IPv6 address apart. */
  keyGenerator(keyGenerator: unknown, ipv6Subnet: unknown): void {
    if (typeof keyGenerator !== 'function') return
    if (this.due('keyGeneratorIpFallback')) {
      const source = keyGenerator.toString()
      if ((source.includes('req.ip') || source.includes('request.ip')) && !source.includes('ipKeyGenerator')) {
        this.report(
          new ValidationError(
            'ERR_ERL_KEY_GEN_IPV6',
            'The keyGenerator reads the request IP without ipKeyGenerator: each IPv6 address of a network is then ' +
              'counted apart, and a client with a /64 has billions of them.',
          ),
        )
      }
    }
    if (this.due('ipv6SubnetOrKeyGenerator') && ipv6Subnet !== undefined) {
      this.report(
        new ValidationError(
          'ERR_ERL_IPV6SUBNET_OR_KEYGENERATOR',
          'ipv6Subnet has no effect with a keyGenerator: call ipKeyGenerator(req.ip, subnet) in it.',
        ),
      )
    }
  }

  /** A limiter made inside a request handler starts from nothing on every request. */
  creationStack(localKeys: boolean): void {
    if (!this.due('creationStack')) return
    const { stack } = new Error('where the limiter was created')
    // Express 4's and Express 5's frame names for a route handler.
    if (stack?.includes('Layer.handle [as handle_request]') || stack?.includes('Layer.handleRequest')) {
      this.report(
        new ValidationError(
          'ERR_ERL_CREATED_IN_REQUEST_HANDLER',
          `A rate limiter should ${localKeys ? '' : 'usually '}be created when the app starts, not in a request handler.`,
        ),
      )
    }
  }
}
