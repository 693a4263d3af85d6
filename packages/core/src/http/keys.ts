import { isCost } from '../util/checks'
import { describe } from '../util/errors'
import type { Logger } from '../util/logger'
import { ipKeyFor } from './ip'
import type { HttpSettings } from './options'

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
 * The client-IP key of a request (the framework's proxy-aware address, IPv6 per `ipv6Subnet`), for every limiter
 * that keys by IP (`rateLimit`, `concurrencyLimit`). When a request comes with an X-Forwarded-For the framework does
 * not trust, one warning per limiter says so.
 *
 * @example
 * const clientKeyOf = clientKeys(64, console)
 * const key = clientKeyOf(facts)
 */
export function clientKeys(ipv6Subnet: number | false, logger: Logger): (facts: RequestFacts) => string {
  const clientKey = ipKeyFor(ipv6Subnet, logger)
  let warned = false
  return function clientKeyOf(facts) {
    if (!warned && facts.headers['x-forwarded-for'] !== undefined && !facts.trustsProxy()) {
      // Once per limiter: the header is either a spoof, or a proxy the app forgot to trust (so every client
      // behind it shares one limit). Either way the developer needs to hear it, but not on every request.
      warned = true
      logger.warn(
        `sluice: ${facts.method} ${facts.path} came with X-Forwarded-For, but the framework does not trust the ` +
          `proxy, so it is keyed by the connection's address (${facts.ip}). Behind a proxy, enable trust proxy.`,
      )
    }
    return clientKey(facts.ip)
  }
}

/** The keys of a request, one per rule: each rule's key function, or the client IP (see {@link clientKeys}). */
export function keysOf<Req, Res>(
  settings: HttpSettings<Req, Res>,
): (req: Req, facts: RequestFacts) => string[] | Promise<string[]> {
  const { ruleKeys, ruleKeyOptions, ipv6Subnet, logger } = settings
  const clientKeyOf = clientKeys(ipv6Subnet, logger)

  const checked = (values: readonly unknown[]): string[] => {
    values.forEach((value, i) => {
      if (typeof value !== 'string') {
        throw new TypeError(`sluice: option "${ruleKeyOptions[i]}" must return a string (got ${describe(value)})`)
      }
    })
    return values as string[]
  }

  return function keysOf(req, facts) {
    const keys: unknown[] = []
    let pending = false
    for (const ruleKey of ruleKeys) {
      const key = ruleKey === undefined ? clientKeyOf(facts) : ruleKey(req)
      // The IP key never costs a promise; only an asynchronous key function (or a wrong answer, checked below) does.
      if (typeof key !== 'string') pending = true
      keys.push(key)
    }
    return pending ? Promise.all(keys).then(checked) : (keys as string[])
  }
}

/** The cost of a request: the `cost` option, or what its function returns, checked where it arrives. */
export function costOf<Req, Res>(settings: HttpSettings<Req, Res>): (req: Req) => number | Promise<number> {
  const { cost } = settings
  if (typeof cost !== 'function') return () => cost
  const checked = (value: unknown): number => {
    if (!isCost(value)) {
      throw new TypeError(`sluice: option "cost" must return a positive whole number (got ${describe(value)})`)
    }
    return value
  }
  return function costOf(req) {
    const value = cost(req)
    return typeof value === 'number' ? checked(value) : Promise.resolve(value).then(checked)
  }
}
