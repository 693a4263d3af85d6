import type { HttpAdapter } from '@sluice/core'
import {
  createHttpPolicy,
  type Decision,
  type HttpLimitOptions,
  InvalidOptionError,
  JSON_CONTENT_TYPE,
  writeVerdict,
} from '@sluice/core'
import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  RouteOptions,
} from 'fastify'
import fp from 'fastify-plugin'

/**
 * Options of a route's `config.rateLimit`: the plugin's options, overridden for this route.
 *
 * @example
 * app.post('/login', { config: { rateLimit: { limit: 5, window: '15m' } satisfies FastifyRouteRateLimitOptions } }, login)
 */
export interface FastifyRouteRateLimitOptions extends HttpLimitOptions<FastifyRequest, FastifyReply> {
  /**
   * Writes a custom 429 reply. The RateLimit, Retry-After and Cache-Control headers are already set.
   * Default: status `statusCode` with `{"error":"rate limit exceeded","retryAfter":<seconds>}`.
   */
  onRejected?: (request: FastifyRequest, reply: FastifyReply, decision: Decision) => void | Promise<void>
}

/**
 * Options of the plugin.
 *
 * @example
 * const options: FastifyRateLimitOptions = { global: false, limit: 100, window: '1m', headers: 'draft-7' }
 * await app.register(rateLimit, options)
 */
export interface FastifyRateLimitOptions extends FastifyRouteRateLimitOptions {
  /** Limit every route (true, the default), or only the routes with a `config.rateLimit` (false). */
  global?: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The rate-limit decision for this request (absent when skipped or not limited). */
    rateLimit?: Decision
  }
  interface FastifyContextConfig {
    /** This route's own limit (counted apart from the global one), or false for none. */
    rateLimit?: FastifyRouteRateLimitOptions | false
  }
}

// With any of these, a route defines its own limit rather than adjusting the plugin's.
const OWN_LIMIT = ['limit', 'rules'] as const
const LIMIT_FIELDS = ['limit', 'window', 'rate', 'name', 'rules'] as const

/** A reply's Node response is `reply.raw`. */
const FASTIFY: HttpAdapter<FastifyReply> = { ownOptions: ['onRejected'], rawResponse: (reply) => reply.raw }

function limitHook(options: FastifyRouteRateLimitOptions): onRequestAsyncHookHandler {
  const policy = createHttpPolicy<FastifyRequest, FastifyReply>(options, FASTIFY)
  const { onRejected } = options
  return async function rateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const facts = {
      ip: request.ip,
      method: request.method,
      path: request.url,
      headers: request.headers,
      // With trustProxy, request.ips lists the socket address and the forwarded ones it trusted.
      trustsProxy: () => (request.ips?.length ?? 0) > 1,
    }
    const verdict = await policy.handle(request, reply, facts)
    await writeVerdict<unknown>(verdict, {
      next: () => undefined,
      decision: (decision) => {
        request.rateLimit = decision
      },
      header: (name, value) => reply.header(name, value),
      rejected: onRejected && ((decision) => onRejected(request, reply, decision)),
      // The JSON is made: with its type set, Fastify sends the text as it is instead of serializing an object.
      send: (status, _body, json) => reply.code(status).header('content-type', JSON_CONTENT_TYPE).send(json),
    })
  }
}

function routeLimitOptions(
  plugin: FastifyRouteRateLimitOptions,
  route: FastifyRouteRateLimitOptions,
  routeOptions: RouteOptions,
): FastifyRouteRateLimitOptions {
  const merged: Record<string, unknown> = { ...plugin }
  if (OWN_LIMIT.some((field) => route[field] !== undefined)) for (const field of LIMIT_FIELDS) delete merged[field]
  Object.assign(merged, route)
  const options = merged as FastifyRouteRateLimitOptions
  if (route.prefix !== undefined) return options
  // A key space of the route's own, so its counts never mix with the global limit's on a shared store.
  const method = Array.isArray(routeOptions.method) ? routeOptions.method.join(',') : routeOptions.method
  return { ...options, prefix: `${plugin.prefix ?? 'sluice'}:${method}:${routeOptions.url}` }
}

const sluiceRateLimit: FastifyPluginAsync<FastifyRateLimitOptions> = async (
  fastify: FastifyInstance,
  options: FastifyRateLimitOptions,
) => {
  const { global = true, ...plugin } = options
  if (typeof global !== 'boolean') throw new InvalidOptionError('global', 'must be true or false')
  // The onRequest hook runs before Fastify reads the body, so a rejected upload is never parsed.
  if (global) {
    const limit = limitHook(plugin)
    fastify.addHook('onRequest', async function rateLimit(request, reply) {
      // A route with its own config (or false) is limited by its own hook alone.
      if (request.routeOptions.config.rateLimit !== undefined) return
      await limit.call(this, request, reply)
    })
  }
  fastify.addHook('onRoute', (routeOptions) => {
    const route = routeOptions.config?.rateLimit
    if (route === undefined || route === false) return
    if (route === null || typeof route !== 'object') {
      throw new InvalidOptionError('config.rateLimit', `must be an object or false on route ${routeOptions.url}`)
    }
    const hook = limitHook(routeLimitOptions(plugin, route, routeOptions))
    const existing = routeOptions.onRequest
    routeOptions.onRequest =
      existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook]
  })
}

/**
 * The Fastify 5 plugin: limits every route (by client IP unless given a `key`) in an `onRequest` hook, before the
 * body is parsed; a route's `config: { rateLimit: {...} }` gives it a limit of its own, `false` none. Register it
 * before the routes it limits.
 *
 * @example
 * import Fastify from 'fastify'
 * import { rateLimit } from '@sluice/fastify'
 *
 * const app = Fastify()
 * await app.register(rateLimit, { limit: 100, window: '1m' })
 * app.post('/login', { config: { rateLimit: { limit: 5, window: '15m' } } }, login)
 * app.get('/health', { config: { rateLimit: false } }, () => 'ok')
 */
export const rateLimit = fp(sluiceRateLimit, { fastify: '5.x', name: '@sluice/fastify' })

export default rateLimit

export type { Decision, HeaderMode, HeadersOption } from '@sluice/core'
