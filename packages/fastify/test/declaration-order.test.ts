// Issue 9: route limits that silently did not apply. Fastify runs `onRoute` hooks only for routes declared after
// them, but adds a plugin's lifecycle hooks (onRequest) to every context, whenever it was created (fastify.js
// addHook walks the existing children) and to every route (route.js settles a route's hooks at preReady). So the
// limit of a route must come from the route's config at request time, not from `onRoute` alone.
import { MemoryStore } from '@sluice/core'
import Fastify, { type FastifyInstance, type RouteShorthandOptions } from 'fastify'
import fastify4 from 'fastify4'
import request from 'supertest'
import { freezeDate } from '../../../scripts/frozen-date'
import { type FastifyRateLimitOptions, type FastifyRouteRateLimitOptions, rateLimit } from '../src'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

let app: FastifyInstance | undefined
/** The Fastify the cases build their apps with: every case runs on Fastify 5 and on Fastify 4. */
let create: typeof Fastify = Fastify

afterEach(async () => {
  await app?.close()
  app = undefined
})

const silent = { warn: () => {}, error: () => {} }

/** Declares the routes, and registers the plugin, in one of the orders an app may use. */
type Order = (app: FastifyInstance, plugin: FastifyRateLimitOptions, routes: (on: FastifyInstance) => void) => void

const ORDERS: readonly [string, Order][] = [
  [
    'register awaited, then routes',
    async (f, plugin, routes) => {
      await f.register(rateLimit, plugin)
      routes(f)
    },
  ],
  [
    'routes declared before register',
    async (f, plugin, routes) => {
      routes(f)
      await f.register(rateLimit, plugin)
    },
  ],
  [
    'register not awaited, then routes',
    (f, plugin, routes) => {
      f.register(rateLimit, plugin)
      routes(f)
    },
  ],
  [
    'routes in a child plugin registered before the rate-limit plugin',
    (f, plugin, routes) => {
      f.register(async (child) => routes(child))
      f.register(rateLimit, plugin)
    },
  ],
  [
    'routes in a child plugin registered after the rate-limit plugin',
    (f, plugin, routes) => {
      f.register(rateLimit, plugin)
      f.register(async (child) => routes(child))
    },
  ],
]

async function start(order: Order, plugin: FastifyRateLimitOptions, routes: (on: FastifyInstance) => void) {
  app = create()
  await order(app, { logger: silent, ...plugin }, routes)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app
}

async function statuses(method: 'GET' | 'HEAD' | 'POST', url: string, times: number): Promise<number[]> {
  const seen: number[] = []
  for (let i = 0; i < times; i++) {
    const server = app!.server
    const res =
      method === 'GET'
        ? await request(server).get(url)
        : method === 'HEAD'
          ? await request(server).head(url)
          : await request(server).post(url)
    seen.push(res.status)
  }
  return seen
}

const login: RouteShorthandOptions = { config: { rateLimit: { limit: 2, window: '15m' } } }

describe.each([
  ['Fastify 5', Fastify],
  ['Fastify 4', fastify4 as unknown as typeof Fastify],
])('%s', (_version, fastify) => {
  beforeAll(() => {
    create = fastify
  })

  describe.each(ORDERS)('%s', (_name, order) => {
    it('a route limit holds (4 requests at limit 2: 2 admitted)', async () => {
      await start(order, { limit: 100, window: '1m' }, (f) => {
        f.post('/login', login, async () => 'ok')
      })
      expect(await statuses('POST', '/login', 4)).toEqual([200, 200, 429, 429])
    })

    it('with global: false, a route limit holds and other routes are free', async () => {
      await start(order, { global: false }, (f) => {
        f.post('/login', login, async () => 'ok')
        f.get('/free', async () => 'free')
      })
      expect(await statuses('POST', '/login', 4)).toEqual([200, 200, 429, 429])
      expect(await statuses('GET', '/free', 4)).toEqual([200, 200, 200, 200])
    })

    it('config.rateLimit false exempts a route from the global limit', async () => {
      await start(order, { limit: 1, window: '1m' }, (f) => {
        f.get('/health', { config: { rateLimit: false } }, async () => 'ok')
        f.get('/', async () => 'limited')
      })
      const health = await request(app!.server).get('/health')
      expect(health.get('ratelimit')).toBeUndefined()
      expect(await statuses('GET', '/health', 3)).toEqual([200, 200, 200])
      expect(await statuses('GET', '/', 2)).toEqual([200, 429])
    })

    it('the global limit holds on routes without a config', async () => {
      await start(order, { limit: 2, window: '1m' }, (f) => {
        f.get('/', async () => 'limited')
      })
      expect(await statuses('GET', '/', 3)).toEqual([200, 200, 429])
    })

    it('a route and its automatic HEAD share one counter (GET 200, 200, then HEAD 429: the handler ran as often as the limit)', async () => {
      await start(order, { limit: 100, window: '1m' }, (f) => {
        f.get('/report', login, async () => 'report')
      })
      expect(await statuses('GET', '/report', 2)).toEqual([200, 200])
      expect(await statuses('HEAD', '/report', 2)).toEqual([429, 429])
    })

    it('a route with params counts per route pattern, not per URL', async () => {
      await start(order, { limit: 100, window: '1m' }, (f) => {
        f.get('/users/:id', login, async () => 'user')
      })
      const seen = [
        ...(await statuses('GET', '/users/1', 1)),
        ...(await statuses('GET', '/users/2', 1)),
        ...(await statuses('GET', '/users/3', 1)),
      ]
      expect(seen).toEqual([200, 200, 429])
    })

    it("builds a route's policy once, not once per request", async () => {
      let reads = 0
      const counted: FastifyRouteRateLimitOptions = {
        window: '15m',
        get limit() {
          reads++
          return 50
        },
      }
      await start(order, { limit: 100, window: '1m' }, (f) => {
        f.get('/counted', { config: { rateLimit: counted } }, async () => 'ok')
      })
      await statuses('GET', '/counted', 1)
      const afterFirst = reads
      expect(afterFirst).toBeGreaterThan(0)
      await statuses('GET', '/counted', 5)
      await statuses('HEAD', '/counted', 5)
      expect(reads).toBe(afterFirst)
    })
  })

  describe('HEAD', () => {
    it('a HEAD route declared by hand counts with the GET at its URL (HEAD is GET without the body)', async () => {
      const store = new MemoryStore()
      const warnings: string[] = []
      app = create()
      await app.register(rateLimit, {
        limit: 100,
        window: '1m',
        store,
        logger: { warn: (m) => warnings.push(m), error() {} },
      })
      app.get('/doc', { exposeHeadRoute: false, config: { rateLimit: { limit: 3, window: '15m' } } }, async () => 'doc')
      app.head('/doc', { config: { rateLimit: { limit: 3, window: '15m' } } }, async (_request, reply) => reply.send())
      await app.listen({ port: 0, host: '127.0.0.1' })
      expect([...(await statuses('GET', '/doc', 2)), ...(await statuses('HEAD', '/doc', 2))]).toEqual([
        200, 200, 200, 429,
      ])
      // Two configs on one count is usually a mistake (one config on the GET covers its HEAD): said once, at startup.
      expect(warnings).toEqual([expect.stringContaining('share their counts')])
    })

    it('a route declared for GET and POST keeps one counter, its automatic HEAD included', async () => {
      await start(ORDERS[1]![1], { limit: 100, window: '1m' }, (f) => {
        f.route({ method: ['GET', 'POST'], url: '/form', ...login, handler: async () => 'form' })
      })
      expect([
        ...(await statuses('HEAD', '/form', 1)),
        ...(await statuses('POST', '/form', 1)),
        ...(await statuses('GET', '/form', 1)),
      ]).toEqual([200, 200, 429])
    })
  })

  describe('invalid route configs', () => {
    it('fail at startup when the route is declared after the plugin, naming the option and the route', async () => {
      app = create()
      await app.register(rateLimit, { global: false })
      expect(() => app!.get('/', { config: { rateLimit: { limit: 0, window: '1m' } } }, async () => 'never')).toThrow(
        'option "limit" must be a positive whole number (got 0)',
      )
      expect(() => app!.get('/x', { config: { rateLimit: 'strict' as never } }, async () => 'never')).toThrow(
        'option "config.rateLimit" must be an object or false on route GET /x',
      )
    })

    it('fail every request of that route (500, never admitted unlimited) when declared before the plugin, logged once', async () => {
      const errors: unknown[][] = []
      app = create()
      app.setErrorHandler(async (error: Error, _request, reply) => reply.code(500).send({ message: error.message }))
      app.post('/login', { config: { rateLimit: { limit: 0, window: '1m' } } }, async () => 'never')
      app.get('/', async () => 'fine')
      await app.register(rateLimit, {
        limit: 10,
        window: '1m',
        logger: { warn() {}, error: (...args) => errors.push(args) },
      })
      await app.listen({ port: 0, host: '127.0.0.1' })
      for (let i = 0; i < 2; i++) {
        const res = await request(app.server).post('/login').expect(500)
        expect(res.body.message).toBe('sluice: option "limit" must be a positive whole number (got 0)')
      }
      await request(app.server).get('/').expect(200)
      expect(errors).toHaveLength(1)
      expect(String(errors[0]![0])).toMatch(/POST \/login/)
    })
  })
})
