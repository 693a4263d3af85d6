import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { type DecisionEvent, MemoryStore } from '@sluice/core'
import Fastify, { type FastifyInstance } from 'fastify'
import request from 'supertest'
import { freezeDate } from '../../../scripts/frozen-date'
import { rateLimit } from '../src'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

const silent = { warn: () => {}, error: () => {} }
let app: FastifyInstance

afterEach(async () => {
  await app.close()
})

async function build(register: (app: FastifyInstance) => Promise<void> | void): Promise<FastifyInstance> {
  app = Fastify()
  await register(app)
  // Real HTTP: the requests go through the server's own parsing, as in production.
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app
}

const statuses = async (url: string, times: number, method: 'GET' | 'POST' = 'GET') => {
  const seen: number[] = []
  for (let i = 0; i < times; i++) {
    const res = method === 'GET' ? await request(app.server).get(url) : await request(app.server).post(url)
    seen.push(res.status)
  }
  return seen
}

describe('@sluice/fastify', () => {
  it('config.rateLimit false exempts a route from the global limit', async () => {
    await build(async (f) => {
      await f.register(rateLimit, { limit: 1, window: '1m', logger: silent })
      f.get('/', async () => 'limited')
      f.get('/health', { config: { rateLimit: false } }, async (request) => ({
        limited: request.rateLimit !== undefined,
      }))
    })
    expect(await statuses('/', 2)).toEqual([200, 429])
    const health = await request(app.server).get('/health').expect(200)
    expect(health.body).toEqual({ limited: false })
    expect(health.get('ratelimit')).toBeUndefined()
  })

  it("a route's own limit replaces the global one there and counts apart, on a shared store", async () => {
    const store = new MemoryStore({ clock: () => 0 })
    await build(async (f) => {
      await f.register(rateLimit, { limit: 2, window: '1m', store, logger: silent, algorithm: 'fixed-window' })
      f.get('/', async () => 'global')
      f.post('/login', { config: { rateLimit: { limit: 5, window: '15m' } } }, async () => 'login')
    })
    expect(await statuses('/login', 6, 'POST')).toEqual([200, 200, 200, 200, 200, 429])
    expect(await statuses('/', 3)).toEqual([200, 200, 429])
    const login = await request(app.server).post('/login').expect(429)
    expect(login.get('ratelimit-policy')).toBe('"default";q=5;w=900')
  })

  it("events tell the plugin's limit and each route's apart: its label, or else the route's own prefix", async () => {
    await build(async (f) => {
      await f.register(rateLimit, { label: 'api', limit: 100, window: '1m', logger: silent })
      f.get('/', async () => 'global')
      f.post('/login', { config: { rateLimit: { limit: 5, window: '15m' } } }, async () => 'login')
      f.get('/search', { config: { rateLimit: { label: 'search', limit: 20, window: '1m' } } }, async () => 'found')
    })
    const limiters: string[] = []
    const listener = (message: unknown) => limiters.push((message as DecisionEvent).limiter)
    subscribe('sluice:decision', listener)
    try {
      await statuses('/', 1)
      await statuses('/login', 1, 'POST')
      await statuses('/search', 1)
    } finally {
      unsubscribe('sluice:decision', listener)
    }
    expect(limiters).toEqual(['api', 'sluice:POST:/login', 'search'])
  })

  it('a route inherits the options it does not set (here the header mode)', async () => {
    await build(async (f) => {
      await f.register(rateLimit, { limit: 2, window: '1m', headers: 'draft-6', logger: silent })
      f.get('/search', { config: { rateLimit: { limit: 10, window: '1m' } } }, async () => 'ok')
    })
    const res = await request(app.server).get('/search').expect(200)
    expect(res.get('ratelimit-limit')).toBe('10')
    expect(res.get('ratelimit-remaining')).toBe('9')
  })

  it('global: false limits only the routes that ask', async () => {
    await build(async (f) => {
      await f.register(rateLimit, { global: false, logger: silent })
      f.get('/free', async () => 'free')
      f.get('/metered', { config: { rateLimit: { limit: 1, window: '1m' } } }, async () => 'metered')
    })
    expect(await statuses('/free', 3)).toEqual([200, 200, 200])
    expect(await statuses('/metered', 2)).toEqual([200, 429])
  })

  it('runs before the body is parsed: a rejected POST never reaches the content parser', async () => {
    let parsed = 0
    await build(async (f) => {
      await f.register(rateLimit, { limit: 1, window: '1m', logger: silent })
      f.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
        parsed++
        done(null, JSON.parse(body as string))
      })
      f.post('/', async (request) => request.body)
    })
    const payload = JSON.stringify({ big: 'x'.repeat(100_000) })
    const send = () => request(app.server).post('/').set('content-type', 'application/json').send(payload)
    expect((await send()).status).toBe(200)
    expect((await send()).status).toBe(429)
    expect(parsed).toBe(1)
  })

  it('an invalid route config fails at startup, naming the option', async () => {
    app = Fastify()
    await app.register(rateLimit, { global: false })
    expect(() => app.get('/', { config: { rateLimit: { limit: 0, window: '1m' } } }, async () => 'never')).toThrow(
      'option "limit" must be a positive whole number (got 0)',
    )
    await expect(app.register(rateLimit, { global: 'yes' } as never).ready()).rejects.toThrow('option "global"')
  })
})

describe('fastify.rateLimit: handles on the keys of each limit', () => {
  it('global, route(method, url) and of(request) find the limit a request goes through', async () => {
    await build(async (f) => {
      await f.register(rateLimit, { limit: 3, window: '1m', logger: silent })
      f.get('/', async () => 'global')
      f.get('/items/:id', { config: { rateLimit: { name: 'items', limit: 10, window: '1m' } } }, async (req) => {
        const own = f.rateLimit.of(req)
        return { keys: await own?.keyOf(req), rule: own?.limiter.rules[0]?.name }
      })
      f.get('/health', { config: { rateLimit: false } }, async (req) => ({ none: f.rateLimit.of(req) === undefined }))
    })
    await request(app.server).get('/').expect(200)
    expect((await request(app.server).get('/items/7').expect(200)).body).toEqual({ keys: ['127.0.0.1'], rule: 'items' })
    expect((await request(app.server).get('/health').expect(200)).body).toEqual({ none: true })
    expect(await app.rateLimit.global?.peek('127.0.0.1')).toMatchObject({ remaining: 2 })
    // By the URL pattern as declared; HEAD is GET's; a route without its own limit has no handle there.
    expect(await app.rateLimit.route('GET', '/items/:id')?.peek('127.0.0.1')).toMatchObject({ remaining: 9 })
    expect(app.rateLimit.route('HEAD', '/items/:id')).toBe(app.rateLimit.route('GET', '/items/:id'))
    expect(app.rateLimit.route('GET', '/')).toBeUndefined()
    await app.rateLimit.global?.reset('127.0.0.1')
    expect(await statuses('/', 4)).toEqual([200, 200, 200, 429])
  })

  it('with global: false there is no global handle', async () => {
    await build(async (f) => {
      await f.register(rateLimit, { global: false, logger: silent })
      f.post('/login', { config: { rateLimit: { limit: 5, window: '15m', block: '15m' } } }, async () => 'ok')
    })
    expect(app.rateLimit.global).toBeUndefined()
    expect(app.rateLimit.route('POST', '/login')?.limiter.rules[0]).toMatchObject({ limit: 5, blockMs: 900_000 })
  })
})
