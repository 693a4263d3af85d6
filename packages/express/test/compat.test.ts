// What @sluice/express/compat adds to express-rate-limit's behaviour, and where it refuses options at construction
// (the differential suite in test/compat checks the rest against express-rate-limit itself).
import { InvalidOptionError, MemoryStore as SluiceMemoryStore } from '@sluice/core'
import express from 'express'
import request from 'supertest'
import { freezeDate } from '../../../scripts/frozen-date'
import { ipKeyGenerator, MemoryStore, type RateLimitInfo, rateLimit } from '../src/compat'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

const infoOf = (req: express.Request) => (req as unknown as { rateLimit: RateLimitInfo }).rateLimit

function appWith(limiter: express.RequestHandler): express.Express {
  const app = express()
  app.use(limiter)
  app.use((req, res) => {
    res.status(Number(req.get('x-status') ?? 200)).json(infoOf(req))
  })
  return app
}

const quiet = { warn() {}, error() {} }

describe('a Sluice algorithm through `algorithm`', () => {
  test('token-bucket on a Sluice MemoryStore: Retry-After is the wait for one token, the reset the wait for all', async () => {
    let now = 600_000
    const store = new SluiceMemoryStore({ clock: () => now })
    const app = appWith(
      rateLimit({
        windowMs: 60_000,
        limit: 4,
        algorithm: 'token-bucket',
        store,
        standardHeaders: 'draft-7',
        logger: quiet,
      }),
    )
    for (let i = 0; i < 4; i++) await request(app).get('/').expect(200)
    // 4 per minute is one token every 15 s.
    const refused = await request(app).get('/').expect(429)
    expect(refused.get('retry-after')).toBe('15')
    expect(refused.get('ratelimit')).toBe('limit=4, remaining=0, reset=60')
    expect(refused.get('cache-control')).toBe('no-store')
    now += 15_000
    expect((await request(app).get('/').expect(200)).body).toMatchObject({ limit: 4, used: 4, remaining: 0 })
  })

  test('with no store, `algorithm` counts in a Sluice MemoryStore', async () => {
    const app = appWith(rateLimit({ limit: 2, algorithm: 'token-bucket', logger: quiet }))
    await request(app).get('/').expect(200)
    await request(app).get('/').expect(200)
    await request(app).get('/').expect(429)
  })

  test('a Sluice store: skipFailedRequests gives the cost back, resetKey and getKey reach it', async () => {
    const store = new SluiceMemoryStore()
    const limiter = rateLimit({ limit: 2, store, skipFailedRequests: true, logger: quiet })
    const app = appWith(limiter)
    await request(app).get('/').set('x-status', '500').expect(500)
    await request(app).get('/').expect(200)
    expect(await limiter.getKey('::ffff:127.0.0.1')).toBeUndefined()
    expect((await limiter.getKey('127.0.0.1'))?.totalHits).toBe(1)
    await request(app).get('/').expect(200)
    await request(app).get('/').expect(429)
    await limiter.resetKey('127.0.0.1')
    await request(app).get('/').expect(200)
  })

  test('a refused request is not counted by a Sluice store: used is what was admitted plus this one', async () => {
    const app = appWith(
      rateLimit({
        limit: 1,
        store: new SluiceMemoryStore(),
        handler: (req, res) => {
          res.status(429).json(infoOf(req))
        },
        logger: quiet,
      }),
    )
    await request(app).get('/').expect(200)
    for (let i = 0; i < 2; i++) {
      expect((await request(app).get('/').expect(429)).body).toMatchObject({ limit: 1, used: 2, remaining: 0 })
    }
  })
})

describe('options that cannot work throw at construction, naming the option', () => {
  test.each([
    ['windowMs', { windowMs: 0 }],
    ['windowMs', { windowMs: '1m' }],
    ['limit', { limit: '5' }],
    ['max', { max: -1 }],
    ['standardHeaders', { standardHeaders: 'draft-9' }],
    ['ipv6Subnet', { ipv6Subnet: 128 }],
    ['store', { store: { increment() {} } }],
    ['algorithm', { algorithm: 'sliding-window', store: new MemoryStore() }],
    ['algorithm', { algorithm: 'gcra' }],
    ['validate.nope', { validate: { nope: false } }],
    ['windwMs', { windwMs: 1000 }],
    ['cacheControl', { cacheControl: '' }],
    ['logger', { logger: { warn() {} } }],
  ])('%s', (option, options) => {
    expect(() => rateLimit(options as never)).toThrow(InvalidOptionError)
    expect(() => rateLimit(options as never)).toThrow(`option "${option}"`)
  })

  test('an unknown option is let through when knownOptions is off, as express-rate-limit does', () => {
    expect(() => rateLimit({ windwMs: 1000, validate: { knownOptions: false }, logger: quiet } as never)).not.toThrow()
  })
})

test('the compat MemoryStore is bounded: past maxKeys, the least recently counted key is dropped', async () => {
  const store = new MemoryStore({ maxKeys: 2 })
  store.init({ windowMs: 60_000 })
  await store.increment('a')
  await store.increment('b')
  await store.increment('a')
  await store.increment('c')
  expect(await store.get('b')).toBeUndefined()
  expect((await store.get('a'))?.totalHits).toBe(2)
  expect((await store.get('c'))?.totalHits).toBe(1)
  store.shutdown()
})

test('ipKeyGenerator keys an IPv6 address by its network, a mapped IPv4 address by the IPv4 address', () => {
  expect(ipKeyGenerator('2001:db8:0:1ff::2')).toBe('2001:db8:0:100::/56')
  expect(ipKeyGenerator('2001:db8:0:1ff::2', 64)).toBe('2001:db8:0:1ff::/64')
  expect(ipKeyGenerator('2001:db8:0:1ff::2', false)).toBe('2001:db8:0:1ff::2')
  expect(ipKeyGenerator('::ffff:192.0.2.1')).toBe('192.0.2.1')
  expect(ipKeyGenerator('192.0.2.1')).toBe('192.0.2.1')
})
