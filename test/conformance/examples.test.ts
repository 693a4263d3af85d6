// The examples are part of the documentation: they must run as their READMEs say. Each app is built by the
// example's own createApp and driven over real HTTP; the tiered one on a real redis-server, as two instances.
import { MemoryStore } from '@sluice/core'
import Redis from 'ioredis'
import supertest from 'supertest'
import { createApp as createExpressApp } from '../../examples/express-basic/app'
import { createApp as createFastifyApp } from '../../examples/fastify-basic/app'
import { createApp as createKoaApp } from '../../examples/koa-basic/app'
import { createApp as createTieredApp } from '../../examples/tiered/app'
import { replayStore } from '../../packages/redis/src/redis-store'
import { type RedisServer, startRedis } from '../../scripts/redis-server'

const servers: { close(): unknown }[] = []

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

// Time stands still in these tests (2026-01-01T00:00:10Z), so no window boundary falls between two requests.
const NOW = 1_767_225_610_000
const frozen = () => new MemoryStore({ clock: () => NOW })

const basics: [string, () => Promise<Parameters<typeof supertest>[0]>][] = [
  ['express-basic', async () => createExpressApp({ store: frozen() })],
  ['koa-basic', async () => createKoaApp({ store: frozen() }).callback()],
  [
    'fastify-basic',
    async () => {
      const app = await createFastifyApp({ store: frozen() })
      servers.push(app)
      await app.ready()
      return app.server
    },
  ],
]

describe.each(basics)('%s', (_, build) => {
  it('counts failed logins apart (5 per 15 min), refunds a successful one, and charges an export 10', async () => {
    const app = await build()
    const login = (password: string) => supertest(app).post('/login').send({ password })
    await login('correct horse').expect(200)
    for (let i = 0; i < 5; i++) await login('guess').expect(401)
    const locked = await login('correct horse').expect(429)
    expect(locked.body).toEqual({ error: 'rate limit exceeded', retryAfter: expect.any(Number) })
    // (Express and Koa count the login attempts under the global limit too; Fastify's route limit replaces it.)
    const items = await supertest(app).get('/items').expect(200)
    await supertest(app).get('/export').expect(200)
    const after = await supertest(app).get('/items').expect(200)
    expect(after.body.remaining).toBe(items.body.remaining - 11)
  })
})

describe('tiered (on Redis, two instances)', () => {
  let redis: RedisServer
  const clients: Redis[] = []

  beforeAll(async () => {
    redis = await startRedis()
  })

  afterAll(async () => {
    for (const client of clients) client.disconnect()
    await redis.stop()
  })

  const instance = () => {
    const client = new Redis({ host: redis.host, port: redis.port })
    clients.push(client)
    // The store's test clock stands in for Redis's TIME, so the one-minute windows cannot roll over mid-test.
    return createTieredApp({ store: replayStore({ client, clock: () => NOW }) })
  }

  it('shares the user, tenant and global counts between instances', async () => {
    const [a, b] = [instance(), instance()]
    const projects = (app: typeof a, apiKey: string) => supertest(app).get('/api/projects').set('x-api-key', apiKey)
    await projects(a, 'key-alice').expect(200)
    const second = await projects(b, 'key-bob').expect(200)
    expect(second.body.rules).toEqual([
      { rule: 'user', remaining: 99 },
      { rule: 'tenant', remaining: 998 },
      { rule: 'global', remaining: 398 },
    ])
    const res = await projects(b, 'key-alice').expect(200)
    expect(res.get('ratelimit-policy')).toBe('"user";q=100;w=60, "tenant";q=1000;w=60, "global";q=400;w=1')
    expect(res.body.rules[0]).toEqual({ rule: 'user', remaining: 98 })
    await supertest(a).get('/api/projects').expect(401)
  })

  it('locks POST /login after 5 attempts per client, on every instance', async () => {
    const [a, b] = [instance(), instance()]
    for (let i = 0; i < 3; i++) await supertest(a).post('/login').expect(401)
    for (let i = 0; i < 2; i++) await supertest(b).post('/login').expect(401)
    const locked = await supertest(a).post('/login').expect(429)
    expect(locked.get('ratelimit-policy')).toBe('"login";q=5;w=900')
    await supertest(b).post('/login').expect(429)
    // The API limits are counted apart from the login limit.
    await supertest(b).get('/api/projects').set('x-api-key', 'key-carol').expect(200)
  })
})
