import {
  type Decision,
  type HttpLimitOptions,
  InvalidOptionError,
  MemoryStore,
  type RateLimitHandle,
} from '@sluice/core'
import { createHttpPolicy, type HttpAdapter, named, rateLimitHandle } from '@sluice/core/internal'
import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
} from 'fastify'
import fp from 'fastify-plugin'
import { factsOf } from './facts'
import type { FastifyRateLimitOptions, FastifyRouteRateLimitOptions } from './options'
import { type LimitFields, routeLimits } from './routes'
import { writeVerdict } from './verdict'
import { FASTIFY_VERSIONS } from './versions'

/**
 * `fastify.rateLimit`: a handle on the keys of each limit the plugin applies (`limiter`, `reset(key)`,
 * `peek(keyOrRequest)`, `keyOf(request)`), to reset a user's login limit after a successful login or show a user
 * the quota left.
 *
 * @example
 * app.post('/login', { config: { rateLimit: { limit: 5, window: '15m', block: '15m' } } }, async (request) => {
 *   const limit = app.rateLimit.of(request)
 *   if (await checkPassword(request)) await limit?.reset(await limit.keyOf(request))
 * })
 */
export interface FastifyRateLimits {
  /** The global limit's handle; undefined with `global: false`. */
  readonly global: RateLimitHandle<FastifyRequest> | undefined
  /**
   * The handle of a route's own limit (`config.rateLimit`) by its method and URL as declared (`'/users/:id'`; HEAD
   * is GET's). Undefined for a route without one, and for a route declared before the plugin until its first
   * request.
   */
  route(method: string, url: string): RateLimitHandle<FastifyRequest> | undefined
  /** The handle of the limit a request goes through: its route's own, or the global one; undefined for none. */
  of(request: FastifyRequest): RateLimitHandle<FastifyRequest> | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Handles on the keys of the plugin's limits: see {@link FastifyRateLimits}. */
    rateLimit: FastifyRateLimits
  }
  interface FastifyRequest {
    /** The rate-limit decision for this request (absent when skipped or not limited). */
    rateLimit?: Decision
  }
  interface FastifyContextConfig {
    /** This route's own limit (counted apart from the global one), or false for none. */
    rateLimit?: FastifyRouteRateLimitOptions | false
  }
}

/** A reply's Node response is `reply.raw`. */
const FASTIFY: HttpAdapter<FastifyReply> = { ownOptions: ['onRejected'], rawResponse: (reply) => reply.raw }

/** Each limit's hook, and its handle for `fastify.rateLimit`. */
const HANDLES = new WeakMap<onRequestAsyncHookHandler, RateLimitHandle<FastifyRequest>>()

function limitHook(options: LimitFields): onRequestAsyncHookHandler {
  const policy = createHttpPolicy<FastifyRequest, FastifyReply>(
    options as HttpLimitOptions<FastifyRequest, FastifyReply>,
    FASTIFY,
  )
  const { onRejected } = options
  const hook = async function rateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await writeVerdict(await policy.handle(request, reply, factsOf(request)), request, reply, onRejected)
  }
  named(hook, 'rateLimit')
  HANDLES.set(hook, rateLimitHandle(policy, factsOf))
  return hook
}

function handleOf(hook: onRequestAsyncHookHandler | undefined): RateLimitHandle<FastifyRequest> | undefined {
  return hook === undefined ? undefined : HANDLES.get(hook)
}

const sluiceRateLimit: FastifyPluginAsync<FastifyRateLimitOptions> = async (
  fastify: FastifyInstance,
  options: FastifyRateLimitOptions,
) => {
  const { global = true, ...plugin }: LimitFields & { global?: boolean } = options
  if (typeof global !== 'boolean') throw new InvalidOptionError('global', 'must be true or false')
  // One store for the global limit and every route's unless given: a route's counters live under keys of their own.
  const limits = routeLimits(
    plugin.store === undefined ? { ...plugin, store: new MemoryStore() } : plugin,
    global,
    limitHook,
  )
  // onRoute hooks see only the routes declared after them: this one builds those limits early, so an invalid config
  // fails at startup. The limit itself is applied by the onRequest hook below, which Fastify adds to every context
  // (even those created before the plugin was registered) and every route (settled when the app is ready). It runs
  // before Fastify reads the body, so a rejected upload is never parsed.
  fastify.decorate('rateLimit', {
    global: handleOf(limits.global),
    route: (method: string, url: string) => handleOf(limits.route(method, url)),
    of: (request: FastifyRequest) => handleOf(limits.of(request)),
  } satisfies FastifyRateLimits)
  fastify.addHook('onRoute', (route) => limits.declare(route))
  const hook: onRequestAsyncHookHandler = async function rateLimit(request, reply) {
    // One limit, or the global one then the route's (`withGlobal`): a request the first refused goes no further.
    for (const limit of limits.chain(request)) {
      await limit.call(this, request, reply)
      if (reply.sent) return
    }
  }
  fastify.addHook('onRequest', named(hook, 'rateLimit'))
}

/**
 * The rate-limit plugin (Fastify 4 and 5): limits every route (by client IP unless given a `key`) in an `onRequest`
 * hook, before the body is parsed; a route's `config: { rateLimit: {...} }` gives it a limit of its own, `false`
 * none, whether the route is declared before or after the plugin is registered. A route's automatic HEAD shares its
 * GET's counter.
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
export const rateLimit = fp(sluiceRateLimit, { fastify: FASTIFY_VERSIONS, name: '@sluice/fastify' })

export default rateLimit

export type { Decision, HeaderMode, HeadersOption, IpKeyOptions, RateLimitHandle } from '@sluice/core'
export { ipKey } from './facts'
export type {
  FastifyOwnOptions,
  FastifyRateLimitOptions,
  FastifyRouteAdjustment,
  FastifyRouteDefaults,
  FastifyRouteRateLimitOptions,
} from './options'
export {
  concurrencyLimit,
  type FastifyConcurrencyLimitOptions,
  type FastifyShedLoadOptions,
  shedLoad,
} from './protect'
