import { type HttpCommonOptions, InvalidOptionError, type Logger } from '@sluice/core'
import { describeValue } from '@sluice/core/internal'
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, RouteOptions } from 'fastify'
import type { FastifyOwnOptions } from './options'

/**
 * Which limit each route has: its own (`config.rateLimit`), the plugin's global one, or none (`false`, or
 * `global: false`). A route's limit is built once, when Fastify declares the route if the plugin is there to see it,
 * otherwise at its first request; either way from the config the route ends up with.
 */
export interface RouteLimits {
  /** Builds the limit of a route being declared, so that an invalid config fails at startup. */
  declare(route: RouteOptions): void
  /** The limit of a request's route, or undefined when it has none. */
  of(request: FastifyRequest): onRequestAsyncHookHandler | undefined
  /**
   * Every limit a request's route applies, in the order they run: its own (or the global one), after the global one
   * when its config says `withGlobal: true`.
   */
  chain(request: FastifyRequest): readonly onRequestAsyncHookHandler[]
  /** The global limit, or undefined with `global: false`. */
  readonly global: onRequestAsyncHookHandler | undefined
  /** The own limit of the route at `method` and `url` (as declared; HEAD is GET), once it has been built. */
  route(method: string, url: string): onRequestAsyncHookHandler | undefined
}

// With any of these, a route defines its own limit rather than adjusting the plugin's.
const OWN_LIMIT = ['limit', 'rules'] as const
const LIMIT_FIELDS = ['limit', 'window', 'rate', 'name', 'period', 'timeZone', 'block', 'rules'] as const

/**
 * The plugin's options or a route's, as the merge reads them: the option types check their shapes where they are
 * written, and the limit they end up in checks the result when it is built.
 */
export type LimitFields = HttpCommonOptions<FastifyRequest, FastifyReply> &
  FastifyOwnOptions & { [field in (typeof LIMIT_FIELDS)[number] | 'algorithm']?: unknown }

/**
 * The route limits of one registration of the plugin. `build` turns options into the onRequest hook that applies
 * them; `plugin` are the plugin's options, the defaults of every route's.
 */
export function routeLimits(
  plugin: LimitFields,
  global: boolean,
  build: (options: LimitFields) => onRequestAsyncHookHandler,
): RouteLimits {
  const globalLimit = global ? build(plugin) : undefined
  // One limit per route config and counter (see `counterOf`): a config shared by several routes limits each apart.
  const byConfig = new WeakMap<object, Map<string, onRequestAsyncHookHandler>>()
  // The answer for each of Fastify's route contexts (a route's automatic HEAD has a context of its own).
  const byContext = new WeakMap<object, onRequestAsyncHookHandler | null>()
  const chains = new WeakMap<object, readonly onRequestAsyncHookHandler[]>()
  // The last limit built for each counter, for `route(method, url)`.
  const byCounter = new Map<string, onRequestAsyncHookHandler>()

  const limitOf = (route: unknown, method: string | readonly string[], url: string) => {
    if (route === null || typeof route !== 'object') {
      throw new InvalidOptionError(
        'config.rateLimit',
        `must be an object or false on route ${routeName(method, url)} (got ${describeValue(route)})`,
      )
    }
    const { withGlobal } = route as { withGlobal?: unknown }
    if (withGlobal !== undefined && typeof withGlobal !== 'boolean') {
      throw new InvalidOptionError(
        'config.rateLimit.withGlobal',
        `must be true or false on route ${routeName(method, url)} (got ${describeValue(withGlobal)})`,
      )
    }
    if (withGlobal === true && globalLimit === undefined) {
      throw new InvalidOptionError(
        'config.rateLimit.withGlobal',
        `needs the plugin's global limit, but the plugin was registered with global: false (route ${routeName(method, url)})`,
      )
    }
    const counter = counterOf(method, url)
    let limits = byConfig.get(route)
    if (limits === undefined) {
      limits = new Map()
      byConfig.set(route, limits)
    }
    let limit = limits.get(counter)
    if (limit === undefined) {
      limit = build(routeOptions(plugin, route as LimitFields, counter))
      limits.set(counter, limit)
      byCounter.set(counter, limit)
    }
    return limit
  }

  const resolve = (config: FastifyRequest['routeOptions']['config']): onRequestAsyncHookHandler | null => {
    const route = config.rateLimit
    if (route === undefined) return globalLimit ?? null
    if (route === false) return null
    try {
      return limitOf(route, config.method, config.url)
    } catch (error) {
      // A route declared before the plugin was registered is first seen here. Its requests fail (never admitted
      // without the limit the developer asked for) with the error, built once and logged once.
      const logger: Logger = isLogger(plugin.logger) ? plugin.logger : console
      logger.error(
        `sluice: the rate limit of route ${routeName(config.method, config.url)} is invalid, so its requests fail ` +
          'until it is fixed (declare the route after registering the plugin to have this error at startup)',
        error,
      )
      return async function invalidRateLimit() {
        throw error
      }
    }
  }

  return {
    global: globalLimit,
    route: (method, url) => byCounter.get(counterOf(method.toUpperCase(), url)),
    declare(route) {
      const config = route.config?.rateLimit
      if (config !== undefined && config !== false) limitOf(config, route.method, route.url)
    },
    of,
    chain(request) {
      const config = request.routeOptions.config
      let chain = chains.get(config)
      if (chain === undefined) {
        const limit = of(request)
        const route = config.rateLimit as { withGlobal?: unknown } | false | undefined
        const stacked = globalLimit !== undefined && limit !== globalLimit && route && route.withGlobal === true
        chain = limit === undefined ? [] : stacked ? [globalLimit, limit] : [limit]
        chains.set(config, chain)
      }
      return chain
    },
  }

  function of(request: FastifyRequest): onRequestAsyncHookHandler | undefined {
    const config = request.routeOptions.config
    let limit = byContext.get(config)
    if (limit === undefined) {
      limit = resolve(config)
      byContext.set(config, limit)
    }
    return limit ?? undefined
  }
}

/**
 * The counter a route's requests are charged to: its URL pattern (`/users/:id`, not the URL) and its methods, where
 * HEAD counts as GET. RFC 9110 s9.3.2: HEAD is GET without the content, so it runs the same handler. Fastify gives a
 * GET route an automatic HEAD route with the same config, and nothing at request time tells that one from a HEAD
 * route declared by hand: both count with the GET at their URL.
 */
function counterOf(method: string | readonly string[], url: string): string {
  const methods = typeof method === 'string' ? [method] : method
  return `${methods.includes('GET') || methods.includes('HEAD') ? 'GET' : methods.join(',')}:${url}`
}

function routeOptions(plugin: LimitFields, route: LimitFields, counter: string): LimitFields {
  const merged: Record<string, unknown> = { ...plugin }
  if (OWN_LIMIT.some((field) => route[field] !== undefined)) for (const field of LIMIT_FIELDS) delete merged[field]
  // A route's limit counts apart from the plugin's, so it does not take the plugin's label: its events say its own,
  // or its prefix (which names the route).
  delete merged['label']
  Object.assign(merged, route)
  // Not a limiter's option: it says which limits the route runs (see `chain`).
  delete merged['withGlobal']
  const options = merged as LimitFields
  if (route.prefix !== undefined) return options
  // A key space of the route's own, so its counts never mix with the global limit's on a shared store.
  return { ...options, prefix: `${plugin.prefix ?? 'sluice'}:${counter}` }
}

function routeName(method: string | readonly string[], url: string): string {
  return `${typeof method === 'string' ? method : method.join(',')} ${url}`
}

function isLogger(logger: unknown): logger is Logger {
  return typeof (logger as Logger | undefined)?.error === 'function'
}
