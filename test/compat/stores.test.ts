// The migration example's app, moved to @sluice/express/compat by its import alone, keeps its store: an
// express-rate-limit store (rate-limit-redis, on a real redis-server) decides as it did under express-rate-limit, and
// Sluice's own RedisStore plugs into the same `store` option, shared by two instances, with its failure policy.
import type { Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { rateLimit as compatRateLimit, type RateLimitInfo } from '@sluice/express/compat'
import { RedisStore } from '@sluice/redis'
import express from 'express'
import { rateLimit as erlRateLimit } from 'express-rate-limit'
import Redis from 'ioredis'
import { RedisStore as ErlRedisStore, type RedisReply } from 'rate-limit-redis'
import supertest from 'supertest'
import { createApp as afterCompat } from '../../examples/migration/express-rate-limit/after-compat'
import { fakeDateOnly } from '../../scripts/frozen-date'
import { recommendedClient } from '../../scripts/redis-clients'
import { startRedis } from '../../scripts/redis-server'
import { privateRedis } from '../../scripts/redis-suite'

let client: Redis
privateRedis(
  (redis) => {
    client = redis.client
  },
  { resetEachTest: true },
)

/** rate-limit-redis over the suite's ioredis client, as its README shows it for ioredis. */
function erlRedisStore(prefix: string): ErlRedisStore {
  return new ErlRedisStore({
    prefix,
    sendCommand: (command: string, ...args: string[]) => client.call(command, ...args) as Promise<RedisReply>,
  })
}

type Factory = typeof compatRateLimit

/** A typical express-rate-limit app: 3 a minute with the draft-7 fields, the counted info echoed back. */
function app(rateLimit: Factory, store: unknown): express.Express {
  const built = express()
  built.use(rateLimit({ windowMs: 60_000, limit: 3, standardHeaders: 'draft-7', legacyHeaders: false, store } as never))
  built.get('/items', (req, res) => {
    res.json((req as unknown as { rateLimit: RateLimitInfo }).rateLimit)
  })
  built.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).json({ failed: error.name })
  })
  return built
}

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
})
async function listen(handler: express.Express): Promise<supertest.Agent> {
  const server = createServer(handler)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return supertest.agent(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
}

// Only Date stands still (sockets, timers and Redis run as usual), so that the instant each limiter computes its
// headers at is known: a reset in the headers is then the seconds from it to the resetTime on the request.
beforeEach(() => {
  fakeDateOnly(Date.UTC(2026, 11, 2, 9, 30, 0, 250))
})
afterEach(() => jest.useRealTimers())

/** The seconds from now (frozen) to a `resetTime`, rounded up, as the headers count them. */
function secondsTo(resetTime: string): number {
  return Math.max(0, Math.ceil((Date.parse(resetTime) - Date.now()) / 1000))
}

describe('an express-rate-limit store (rate-limit-redis) behind the compat entry', () => {
  test('the same decisions, counts and fields as express-rate-limit on the same store', async () => {
    const peer = await listen(app(erlRateLimit as unknown as Factory, erlRedisStore('erl:')))
    const ours = await listen(app(compatRateLimit, erlRedisStore('compat:')))
    for (let i = 0; i < 5; i++) {
      const [a, b] = [await peer.get('/items'), await ours.get('/items')]
      expect({ i, status: b.status }).toEqual({ i, status: a.status })
      expect(b.headers['ratelimit-policy']).toBe(a.headers['ratelimit-policy'])
      if (a.status === 200) {
        const { resetTime: peerReset, ...peerInfo } = a.body as Record<string, string>
        const { resetTime: ourReset, ...ourInfo } = b.body as Record<string, string>
        expect(ourInfo).toEqual(peerInfo)
        // The reset comes from Redis's PTTL on each key, so each response is checked against its own resetTime.
        expect(b.headers['ratelimit']).toBe(`limit=3, remaining=${2 - i}, reset=${secondsTo(ourReset as string)}`)
        expect(a.headers['ratelimit']).toBe(`limit=3, remaining=${2 - i}, reset=${secondsTo(peerReset as string)}`)
      } else {
        expect(b.text).toBe(a.text)
        expect(b.headers['ratelimit']).toMatch(/^limit=3, remaining=0, reset=\d+$/)
        expect(b.headers['retry-after']).toBe(b.headers['ratelimit']?.split('reset=')[1])
        expect(b.headers['cache-control']).toBe('no-store')
      }
    }
    expect(await client.get('compat:127.0.0.1')).toBe('5')
    expect(await client.get('erl:127.0.0.1')).toBe('5')
  })
})

describe("Sluice's RedisStore in the same `store` option", () => {
  test('two instances share one limit through Redis, with the same fields on the request and the response', async () => {
    const first = await listen(app(compatRateLimit, new RedisStore({ client })))
    const second = await listen(app(compatRateLimit, new RedisStore({ client })))
    const seen = [await first.get('/items'), await second.get('/items'), await first.get('/items')]
    expect(seen.map((r) => r.status)).toEqual([200, 200, 200])
    for (const [i, response] of seen.entries()) {
      const info = response.body as RateLimitInfo & { resetTime: string }
      expect(info).toMatchObject({ limit: 3, used: i + 1, remaining: 2 - i, key: '127.0.0.1' })
      expect(response.headers['ratelimit-policy']).toBe('3;w=60')
      expect(response.headers['ratelimit']).toBe(`limit=3, remaining=${2 - i}, reset=${secondsTo(info.resetTime)}`)
    }
    const refused = await second.get('/items')
    expect(refused.status).toBe(429)
    expect(refused.text).toBe('Too many requests, please try again later.')
    expect(refused.headers['ratelimit']).toMatch(/^limit=3, remaining=0, reset=\d+$/)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(refused.headers['cache-control']).toBe('no-store')
  })

  test("with the default onError 'local', a Redis that goes down still limits, from this instance's memory", async () => {
    jest.useRealTimers()
    const server = await startRedis()
    const own = await recommendedClient(server.port)
    const warnings: string[] = []
    const store = new RedisStore({
      client: own,
      logger: { warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
    })
    try {
      const limited = await listen(app(compatRateLimit, store))
      expect((await limited.get('/items')).status).toBe(200)
      await server.kill()
      // The local stand-in has the same rule and starts empty: 3 more admitted, then refused; never an error.
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) statuses.push((await limited.get('/items')).status)
      expect(statuses).toEqual([200, 200, 200, 429])
      expect(warnings.filter((w) => w.includes('deciding from local memory'))).toHaveLength(1)
    } finally {
      store.close()
      own.disconnect()
      await server.stop()
    }
  })

  test("with onError 'closed', a Redis that is down is a store error: passed to the error handler, as express-rate-limit does", async () => {
    // The store's deadlines read Date: this one runs on the real clock.
    jest.useRealTimers()
    const broken = brokenClient()
    const store = new RedisStore({ client: broken, onError: 'closed', logger: { warn() {}, error() {} } })
    const down = await listen(app(compatRateLimit, store))
    const response = await down.get('/items')
    store.close()
    broken.disconnect()
    expect(response.status).toBe(500)
    expect(response.body).toEqual({ failed: 'StoreUnavailableError' })
  })
})

test('the migration example runs on the compat entry with the same decisions as on express-rate-limit', async () => {
  const ours = await listen(afterCompat())
  const statuses: number[] = []
  for (let i = 0; i < 101; i++) statuses.push((await ours.get('/items')).status)
  expect(statuses).toEqual([...Array<number>(100).fill(200), 429])
  // Another client (the example trusts one proxy): only its failed logins count, 5 an hour.
  const login = (password: string) =>
    ours.post('/login').set('x-forwarded-for', '192.0.2.7').set('x-password', password)
  const logins: number[] = []
  for (let i = 0; i < 2; i++) logins.push((await login('open sesame')).status)
  for (let i = 0; i < 6; i++) logins.push((await login('wrong')).status)
  expect(logins).toEqual([204, 204, 401, 401, 401, 401, 401, 429])
})

/** An ioredis client on a port where nothing listens, that fails at once rather than queueing. */
function brokenClient(): Redis {
  return new Redis({
    host: '127.0.0.1',
    port: 1,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
}
