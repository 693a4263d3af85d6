// The options of the plugin and of a route's `config.rateLimit`, shaped as the shared HTTP options of @sluice/core
// plus what only Fastify has: index.ts (the plugin) and routes.ts (which limit each route has) both read them.
import type { Decision, HttpCommonOptions, HttpLimitOptions, HttpRuleDefaults } from '@sluice/core'
import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * What the plugin and a route's `config.rateLimit` take beyond the shared HTTP options.
 *
 * @example
 * const own: FastifyOwnOptions = { onRejected: (_request, reply) => reply.code(429).send('Slow down') }
 */
export interface FastifyOwnOptions {
  /**
   * Writes a custom 429 reply. The RateLimit, Retry-After and Cache-Control headers are already set.
   * Default: status `statusCode` with `{"error":"rate limit exceeded","retryAfter":<seconds>}`.
   */
  onRejected?: (request: FastifyRequest, reply: FastifyReply, decision: Decision) => void | Promise<void>
}

/**
 * A route's `config.rateLimit` that adjusts the plugin's limit (its `window`, `key`, `headers`...) rather than
 * defining one of its own: without `limit` and `rules`.
 *
 * @example
 * app.get('/search', { config: { rateLimit: { key: (request) => request.user.id } } }, search)
 */
export interface FastifyRouteAdjustment
  extends HttpCommonOptions<FastifyRequest, FastifyReply>,
    FastifyOwnOptions,
    Omit<HttpRuleDefaults<FastifyRequest>, 'limit' | 'rules'> {
  limit?: never
  rules?: never
}

/**
 * Options of a route's `config.rateLimit`: a limit of its own (with `limit` or `rules`, shaped by its algorithm as the
 * plugin's), or an adjustment of the plugin's options for this route.
 *
 * @example
 * app.post('/login', { config: { rateLimit: { limit: 5, window: '15m' } satisfies FastifyRouteRateLimitOptions } }, login)
 */
export type FastifyRouteRateLimitOptions = (
  | FastifyRouteAdjustment
  | (HttpLimitOptions<FastifyRequest, FastifyReply> & FastifyOwnOptions)
) & {
  /**
   * Apply the plugin's global limit too, before this route's (default false: the route's limit replaces it). A
   * request must pass both and is counted by both; the IETF RateLimit fields list both, and Retry-After and the
   * single-policy fields follow the binding one.
   */
  withGlobal?: boolean
}

/**
 * Options of the plugin with `global: false`: only the routes with a `config.rateLimit` are limited, and these options
 * are the defaults their configs complete (a `window` here, a `limit` there).
 *
 * @example
 * const options: FastifyRouteDefaults = { global: false, window: '1m', headers: 'draft-7' }
 */
export interface FastifyRouteDefaults
  extends HttpCommonOptions<FastifyRequest, FastifyReply>,
    FastifyOwnOptions,
    HttpRuleDefaults<FastifyRequest> {
  /** Limit only the routes with a `config.rateLimit`. */
  global: false
}

/**
 * Options of the plugin: a limit for every route (`global`, the default), or with `global: false` the defaults of the
 * routes that have a `config.rateLimit`.
 *
 * @example
 * const options: FastifyRateLimitOptions = { limit: 100, window: '1m', headers: 'draft-7' }
 * await app.register(rateLimit, options)
 */
export type FastifyRateLimitOptions =
  | FastifyRouteDefaults
  | (HttpLimitOptions<FastifyRequest, FastifyReply> & FastifyOwnOptions & { global?: true })
