import type { ConcurrencyLimiter, HttpConcurrencyOptions, HttpShedOptions, Shedder } from '@sluice/core'
import { createConcurrencyPolicy, createShedPolicy, named } from '@sluice/core/internal'
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { factsOf } from './facts'
import { writeVerdict } from './verdict'
import { FASTIFY_VERSIONS } from './versions'

/**
 * Options of the {@link shedLoad} plugin: the shedder's, with `priority(request)`, `tenant(request)` and
 * `skip(request)`.
 *
 * @example
 * await app.register(shedLoad, { maxInFlight: 64, priority: (request) => (request.url === '/login' ? 'critical' : 'normal') } satisfies FastifyShedLoadOptions)
 */
export type FastifyShedLoadOptions = HttpShedOptions<FastifyRequest>

/**
 * Options of the {@link concurrencyLimit} plugin: a limit per key and/or a global one, with `key(request)`
 * (default: `request.ip`).
 *
 * @example
 * await app.register(concurrencyLimit, { limit: 10 } satisfies FastifyConcurrencyLimitOptions)
 */
export type FastifyConcurrencyLimitOptions = HttpConcurrencyOptions<FastifyRequest>

declare module 'fastify' {
  interface FastifyInstance {
    /** The load shedder of the `shedLoad` plugin, to read its state. */
    shedder?: Shedder
    /** The concurrency limiter of the `concurrencyLimit` plugin. */
    concurrencyLimiter?: ConcurrencyLimiter
  }
}

const shedPlugin: FastifyPluginAsync<FastifyShedLoadOptions> = async (fastify: FastifyInstance, options) => {
  const policy = createShedPolicy<FastifyRequest>(options)
  fastify.decorate('shedder', policy.shedder)
  // onRequest runs before Fastify reads the body: a shed upload is never read, let alone parsed.
  const hook: onRequestAsyncHookHandler = async function shedLoad(request, reply) {
    await writeVerdict(await policy.handle(request, reply.raw, factsOf(request)), request, reply)
  }
  fastify.addHook('onRequest', named(hook, 'shedLoad'))
}

const concurrencyPlugin: FastifyPluginAsync<FastifyConcurrencyLimitOptions> = async (
  fastify: FastifyInstance,
  options,
) => {
  const policy = createConcurrencyPolicy<FastifyRequest>(options)
  fastify.decorate('concurrencyLimiter', policy.limiter)
  const hook: onRequestAsyncHookHandler = async function concurrencyLimit(request, reply) {
    await writeVerdict(await policy.handle(request, reply.raw, factsOf(request)), request, reply)
  }
  fastify.addHook('onRequest', named(hook, 'concurrencyLimit'))
}

/**
 * The load-shedding plugin (Fastify 4 and 5): at most `maxInFlight` requests run at once, a bounded line waits for a
 * slot until `maxWait`, and what cannot be served in time is answered at once with `503`, `Retry-After` and
 * `{"error":"overloaded","retryAfter":<s>}`, the least important first and fairly among tenants. It decides in
 * `onRequest`, before the body is read. `fastify.shedder` shows its state. Register it before the routes.
 *
 * @example
 * import Fastify from 'fastify'
 * import { shedLoad } from '@sluice/fastify'
 *
 * const app = Fastify()
 * await app.register(shedLoad, { maxInFlight: 64, maxEventLoopDelay: '200ms' })
 */
export const shedLoad = fp(shedPlugin, { fastify: FASTIFY_VERSIONS, name: '@sluice/fastify/shed-load' })

/**
 * The concurrency-limit plugin (Fastify 4 and 5): a slot per request in flight per client (or globally, `globalLimit`),
 * taken in `onRequest` and given back when the response ends or the client goes away. Over the limit: `429`,
 * `Retry-After`, `{"error":"too many requests in flight","retryAfter":<s>}`.
 *
 * @example
 * import { concurrencyLimit } from '@sluice/fastify'
 *
 * await app.register(concurrencyLimit, { limit: 10 })
 */
export const concurrencyLimit = fp(concurrencyPlugin, {
  fastify: FASTIFY_VERSIONS,
  name: '@sluice/fastify/concurrency-limit',
})
