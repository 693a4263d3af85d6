// The code of docs/quotas.md: each region is a block of the doc, word for word (test/docs/code-blocks.test.ts), and
// `npm run typecheck` compiles this file. test/docs/quotas.test.ts builds these apps and runs the doc's figures
// through them over HTTP, so what the doc says they do is what they do.
import type { Store } from '@sluice/core'
import { ipKey, type RateLimitMiddleware, rateLimit } from '@sluice/express'
import { rateLimit as fastifyRateLimit } from '@sluice/fastify'
import express from 'express'
import type { FastifyInstance, FastifyRequest } from 'fastify'

/** The API of the worked quota: a rate and a daily quota per API key, both on `store`. */
export function quotaApp(store: Store): { app: express.Express; api: RateLimitMiddleware } {
  const app = express()
  // #region quota
  const api = rateLimit({
    key: (req) => req.get('x-api-key') ?? ipKey(req),
    rules: [
      { name: 'burst', limit: 1000, window: '1m' }, // a rate: 1000 a minute
      { name: 'daily', limit: 500_000, period: 'day', timeZone: 'Europe/Berlin' }, // a quota: 500,000 a Berlin day
    ],
    store, // a RedisStore to share the counts between instances
  })
  app.use('/api', api)
  // #endregion quota
  app.get('/api/items', (_req, res) => {
    res.json([])
  })
  return { app, api }
}

/** Free and pro plans on one route; `planOf` stands for the app's own lookup (a database, a token's claims). */
export function plansApp(store: Store, planOf: (req: express.Request) => Promise<'free' | 'pro'>): express.Express {
  const app = express()
  // #region plans
  app.use(
    rateLimit({
      algorithm: 'fixed-window',
      key: (req) => req.get('x-api-key') ?? ipKey(req),
      limit: async (req) => ((await planOf(req)) === 'pro' ? 1000 : 10), // per minute, by plan
      window: '1m',
      store,
    }),
  )
  // #endregion plans
  app.get('/', (_req, res) => {
    res.send('ok')
  })
  return app
}

/** The failed-login lockout; `checkPassword` stands for the app's own check. */
export function loginApp(store: Store, checkPassword: (req: express.Request) => Promise<boolean>): express.Express {
  const app = express()
  // #region lockout
  const loginLimit = rateLimit({ name: 'login', limit: 5, window: '15m', block: '15m', store })
  app.post('/login', loginLimit, async (req, res) => {
    if (!(await checkPassword(req))) {
      res.status(401).json({ error: 'wrong password' }) // counted: the sixth failure in 15 minutes locks the key out
      return
    }
    await loginLimit.reset(await loginLimit.keyOf(req)) // a success forgets the failures
    res.json({ ok: true })
  })
  // #endregion lockout
  return app
}

/** Allow and deny lists in front of a limit; `isRevoked` stands for the app's own lookup. */
export function listsApp(store: Store, isRevoked: (apiKey: string) => Promise<boolean>): express.Express {
  const app = express()
  // #region lists
  app.set('trust proxy', 1) // the client address is the one the load balancer saw (docs/http.md, "Keys")
  app.use(
    rateLimit({
      limit: 100,
      window: '1m',
      allowList: ['10.0.0.0/8', 'fd00::/8'], // internal callers: never counted, no headers
      denyList: ['203.0.113.0/24', '2001:db8:bad::/48'], // answered 403 before anything else
      store,
    }),
  )
  app.use(
    '/partner',
    rateLimit({
      name: 'partner',
      limit: 1000,
      window: '1m',
      key: (req) => req.get('x-api-key') ?? 'anonymous',
      denyList: async (req) => isRevoked(req.get('x-api-key') ?? ''), // a function of the request, sync or async
      store,
    }),
  )
  // #endregion lists
  app.use((_req, res) => {
    res.send('ok')
  })
  return app
}

/** The handle of the quota API: what a user has left, and a support desk's reset. */
export function handleRoutes(app: express.Express, api: RateLimitMiddleware): void {
  // #region handle
  app.get('/quota', async (req, res) => {
    const left = await api.peek(req) // charges nothing; the rules' decisions are in left.rules
    res.json(left.rules?.map(({ rule, remaining }) => ({ rule, remaining })))
  })
  app.delete('/support/quota/:apiKey', async (req, res) => {
    await api.reset(req.params.apiKey) // one key for every rule: the rate and the quota start again
    res.status(204).end()
  })
  // #endregion handle
}

/** The same lockout on Fastify, through the plugin's decorator. */
export async function fastifyLogin(
  app: FastifyInstance,
  checkPassword: (request: FastifyRequest) => Promise<boolean>,
): Promise<void> {
  // #region fastify
  await app.register(fastifyRateLimit, { global: false })
  app.post(
    '/login',
    { config: { rateLimit: { name: 'login', limit: 5, window: '15m', block: '15m' } } },
    async (request, reply) => {
      if (!(await checkPassword(request))) return reply.code(401).send({ error: 'wrong password' })
      const limit = app.rateLimit.of(request) // this route's own limit
      await limit?.reset(await limit.keyOf(request))
      return { ok: true }
    },
  )
  // #endregion fastify
}
