import { isCost } from '../util/checks'
import { warnOnce } from '../util/diagnostics'
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
  /**
   * Whether the framework trusts every proxy in front of it (Express `trust proxy` true, Koa `app.proxy` without
   * `maxIpsCount`, Fastify `trustProxy: true`): it then takes the left-most X-Forwarded-For entry, which the client
   * writes. Asked once per limiter, at the first request whose header lists several addresses.
   */
  trustsEveryProxy?(): boolean
}

/**
 * The client-IP key of a request (the framework's proxy-aware address, IPv6 per `ipv6Subnet`), for every limiter
 * that keys by IP (`rateLimit`, `concurrencyLimit`). A request with an X-Forwarded-For the framework does not trust
 * (SLUICE_FORWARDED_UNTRUSTED), or one through several proxies that the framework all trusts
 * (SLUICE_PERMISSIVE_TRUST_PROXY), is warned of once (see docs/diagnostics.md).
 *
 * @example
 * const clientKeyOf = clientKeys(64, console)
 * const key = clientKeyOf(facts)
 */
export function clientKeys(ipv6Subnet: number | false, logger: Logger): (facts: RequestFacts) => string {
  const clientKey = ipKeyFor(ipv6Subnet, logger)
  let checkedUntrusted = false
  let checkedPermissive = false
  return function clientKeyOf(facts) {
    if (checkedUntrusted && checkedPermissive) return clientKey(facts.ip)
    const forwarded = facts.headers['x-forwarded-for']
    if (forwarded === undefined) return clientKey(facts.ip)
    if (!facts.trustsProxy()) {
      if (!checkedUntrusted) {
        // Once: the header is either a spoof, or a proxy the app forgot to trust (so every client behind it shares
        // one limit). Either way the developer needs to hear it, but not on every request.
        checkedUntrusted = true
        warnOnce(
          logger,
          'SLUICE_FORWARDED_UNTRUSTED',
          `sluice: ${facts.method} ${facts.path} came with X-Forwarded-For, but the framework does not trust the ` +
            `proxy, so it is keyed by the connection's address (${facts.ip}). Behind a proxy, enable trust proxy.`,
        )
      }
    } else if (!checkedPermissive && String(forwarded).includes(',')) {
      checkedPermissive = true
      if (facts.trustsEveryProxy?.() === true) {
        warnOnce(
          logger,
          'SLUICE_PERMISSIVE_TRUST_PROXY',
          `sluice: ${facts.method} ${facts.path} came through several proxies and the framework trusts every one, so ` +
            `it is keyed by the left-most X-Forwarded-For address (${facts.ip}), which the client can write. Trust ` +
            'only your own proxies (a hop count, or their addresses).',
        )
      }
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
