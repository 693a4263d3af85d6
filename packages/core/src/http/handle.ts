import type { Limiter } from '../limiter/limiter'
import type { Decision } from '../rules/decision'
import type { RequestFacts } from './keys'
import type { HttpPolicy } from './policy'

/**
 * What the middleware `rateLimit` returns carries (and Fastify's `fastify.rateLimit` gives per limit): a handle on
 * the keys it counts, for an app to reset a user's login limit after a successful login, or show a user the quota
 * left.
 *
 * @example
 * const loginLimit = rateLimit({ name: 'login', limit: 5, window: '15m', block: '15m' })
 * app.post('/login', loginLimit, async (req, res) => {
 *   if (await checkPassword(req)) await loginLimit.reset(await loginLimit.keyOf(req))
 * })
 * app.get('/quota', async (req, res) => res.json(await apiLimit.peek(req)))
 */
export interface RateLimitHandle<Req> {
  /** The limiter behind the middleware (with a `limit` or `window` function, its rules show placeholders). */
  readonly limiter: Limiter
  /** Forgets the keys (one per rule, or one for all rules) under every rule: counts and blocks. */
  reset(key: string | readonly string[]): Promise<void>
  /**
   * The decision a request of cost 1 would get now, charging nothing: for a request (its keys, and its limits when
   * `limit` or `window` is a function), or for keys (the configured limits; with a `limit` or `window` function,
   * give the request instead: the keys alone cannot say which limits apply).
   */
  peek(target: Req | string | readonly string[]): Promise<Decision>
  /** The keys the limiter counts a request under, one per rule (allow and deny lists and `skip` aside). */
  keyOf(req: Req): Promise<string[]>
}

/**
 * The handle of an adapter's middleware, from its policy and how it reads its framework's request.
 *
 * @example
 * return Object.assign(middleware, rateLimitHandle(policy, factsOf))
 */
export function rateLimitHandle<Req>(
  policy: Pick<HttpPolicy<Req, unknown>, 'limiter' | 'keysOf' | 'limiterOf' | 'perRequestLimits'>,
  factsOf: (req: Req) => RequestFacts,
): RateLimitHandle<Req> {
  const { limiter } = policy
  return {
    limiter,
    reset: (key) => limiter.reset(key),
    async peek(target) {
      if (typeof target === 'string' || Array.isArray(target)) {
        if (policy.perRequestLimits) {
          throw new TypeError(
            'sluice: peek(key) cannot tell which limits apply, since `limit` or `window` is a function of the ' +
              'request: give the request, peek(req)',
          )
        }
        return limiter.peek(target as string | readonly string[], 1)
      }
      const req = target as Req
      const [keys, requestLimiter] = await Promise.all([policy.keysOf(req, factsOf(req)), policy.limiterOf(req)])
      return requestLimiter.peek(keys, 1)
    },
    keyOf: (req) => policy.keysOf(req, factsOf(req)),
  }
}
