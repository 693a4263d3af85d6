// docs/migration.md, run: for each peer, the guide's "before" app (the peer) and "after" app (Sluice), both driven over
// real HTTP, limit the same requests; where the guide says they differ (headers, bodies, IPv6 grouping), they do.
//
// Time stands still (only Date is faked, so sockets and timers run as usual) at an instant that starts a window of
// every limit here: a Sluice window is aligned to the clock, a peer's starts at a client's first request, and the
// two agree when both start together.
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type Koa from 'koa'
import supertest from 'supertest'
import { createApp as expressAfter } from '../../examples/migration/express-rate-limit/after'
import { createApp as fastifyAfter } from '../../examples/migration/fastify-rate-limit/after'
import { createApp as koaAfter } from '../../examples/migration/koa-ratelimit/after'
import { createApp as flexibleAfter } from '../../examples/migration/rate-limiter-flexible/after'
import { fakeDateOnly } from '../../scripts/frozen-date'

/**
 * A peer's "before" app. They are loaded by path, and type-checked in a program of their own
 * (examples/migration/tsconfig.json): @fastify/rate-limit and @sluice/fastify both declare Fastify's
 * `config.rateLimit`, and one program cannot hold both declarations.
 */
function before<App>(peer: string): () => App {
  return (require(join(__dirname, '../../examples/migration', peer, 'before')) as { createApp(): App }).createApp
}

const servers: Server[] = []
const fastifies: FastifyInstance[] = []

afterEach(async () => {
  jest.useRealTimers()
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
  await Promise.all(fastifies.splice(0).map((app) => app.close()))
})

/** Freezes Date at the first instant of a window of `windowMs` from now on, and returns that instant. */
function freezeAtWindowStart(windowMs: number): number {
  const now = Math.ceil(Date.now() / windowMs) * windowMs
  fakeDateOnly(now)
  return now
}

async function listen(handler: RequestListener): Promise<Server> {
  const server = createServer(handler)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}

async function fastifyServer(app: FastifyInstance): Promise<Server> {
  fastifies.push(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app.server
}

type Request = (agent: supertest.Agent) => supertest.Test

/** The statuses of `count` requests sent one after the other. */
async function statuses(server: Server, count: number, request: Request): Promise<number[]> {
  const agent = supertest.agent(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  const seen: number[] = []
  for (let i = 0; i < count; i++) seen.push((await request(agent)).status)
  return seen
}

const times = (count: number, status: number) => Array<number>(count).fill(status)
const get = (path: string, forwardedFor?: string) => (agent: supertest.Agent) => {
  const test = agent.get(path)
  return forwardedFor === undefined ? test : test.set('x-forwarded-for', forwardedFor)
}

describe('from express-rate-limit', () => {
  const build = async () => ({
    before: await listen(before<RequestListener>('express-rate-limit')()),
    after: await listen(expressAfter()),
  })

  test('both admit 100 requests per client in 15 minutes and refuse the rest', async () => {
    freezeAtWindowStart(15 * 60_000)
    const { before, after } = await build()
    const expected = [...times(100, 200), 429, 429]
    expect(await statuses(before, 102, get('/items'))).toEqual(expected)
    expect(await statuses(after, 102, get('/items'))).toEqual(expected)
    // Another client is counted apart in both.
    expect(await statuses(before, 1, get('/items', '192.0.2.7'))).toEqual([200])
    expect(await statuses(after, 1, get('/items', '192.0.2.7'))).toEqual([200])
  })

  test('the draft-7 headers are the same when the windows start together; Sluice adds Cache-Control: no-store to a 429', async () => {
    freezeAtWindowStart(15 * 60_000)
    const { before, after } = await build()
    const responses = async (server: Server) => {
      const agent = supertest.agent(server)
      const first = await agent.get('/items')
      for (let i = 1; i < 100; i++) await agent.get('/items')
      return { first, refused: await agent.get('/items') }
    }
    const peer = await responses(before)
    const sluice = await responses(after)
    for (const field of ['ratelimit', 'ratelimit-policy']) {
      expect(sluice.first.headers[field]).toBe(peer.first.headers[field])
      expect(sluice.refused.headers[field]).toBe(peer.refused.headers[field])
    }
    expect(sluice.first.headers['ratelimit']).toBe('limit=100, remaining=99, reset=900')
    expect(sluice.refused.headers['retry-after']).toBe(peer.refused.headers['retry-after'])
    expect(peer.refused.text).toBe('Too many requests, please try again later.')
    expect(sluice.refused.body).toEqual({ error: 'rate limit exceeded', retryAfter: 900 })
    expect(sluice.refused.headers['cache-control']).toBe('no-store')
    expect(peer.refused.headers['cache-control']).toBeUndefined()
  })

  test("a window that starts at a client's first request, or on the clock", async () => {
    const start = freezeAtWindowStart(15 * 60_000)
    jest.setSystemTime(start + 5 * 60_000)
    const { before, after } = await build()
    expect((await supertest(before).get('/items')).headers['ratelimit']).toBe('limit=100, remaining=99, reset=900')
    expect((await supertest(after).get('/items')).headers['ratelimit']).toBe('limit=100, remaining=99, reset=600')
  })

  test('IPv6: express-rate-limit counts a /56 as one client, Sluice a /64', async () => {
    freezeAtWindowStart(60 * 60_000)
    const { before, after } = await build()
    const login = (address: string) => (agent: supertest.Agent) =>
      agent.post('/login').set('x-forwarded-for', address).set('x-password', 'wrong')
    // Five failed logins from one /64, then one from the next /64 of the same /56.
    expect(await statuses(before, 5, login('2001:db8:0:100::1'))).toEqual(times(5, 401))
    expect(await statuses(after, 5, login('2001:db8:0:100::1'))).toEqual(times(5, 401))
    expect(await statuses(before, 1, login('2001:db8:0:101::1'))).toEqual([429])
    expect(await statuses(after, 1, login('2001:db8:0:101::1'))).toEqual([401])
  })

  test('skipSuccessfulRequests and refund: only failed logins count, 5 an hour', async () => {
    freezeAtWindowStart(60 * 60_000)
    const { before, after } = await build()
    const attempt = (password: string) => (agent: supertest.Agent) => agent.post('/login').set('x-password', password)
    for (const server of [before, after]) {
      expect(await statuses(server, 3, attempt('open sesame'))).toEqual(times(3, 204))
      expect(await statuses(server, 6, attempt('wrong'))).toEqual([...times(5, 401), 429])
    }
  })
})

describe('from @fastify/rate-limit', () => {
  const build = async () => ({
    before: await fastifyServer(await before<Promise<FastifyInstance>>('fastify-rate-limit')()),
    after: await fastifyServer(await fastifyAfter()),
  })

  test('both admit 100 a minute per client, 5 logins in 15 minutes on a limit of their own, and never limit /health or the allowed address', async () => {
    freezeAtWindowStart(15 * 60_000)
    const { before, after } = await build()
    for (const server of [before, after]) {
      expect(await statuses(server, 102, get('/items'))).toEqual([...times(100, 200), 429, 429])
      expect(await statuses(server, 6, (agent) => agent.post('/login'))).toEqual([...times(5, 401), 429])
      expect(await statuses(server, 3, get('/health'))).toEqual(times(3, 200))
      expect(await statuses(server, 102, get('/items', '192.0.2.10'))).toEqual(times(102, 200))
    }
  })

  test('x-ratelimit-* (reset in seconds from now) and an error object, or RateLimit fields and a JSON body', async () => {
    freezeAtWindowStart(60_000)
    const { before, after } = await build()
    const peer = await supertest(before).get('/items')
    expect(peer.headers).toMatchObject({
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '99',
      'x-ratelimit-reset': '60',
    })
    const sluice = await supertest(after).get('/items')
    expect(sluice.headers).toMatchObject({
      'ratelimit-policy': '"default";q=100;w=60',
      ratelimit: '"default";r=99;t=60',
    })
    expect(sluice.headers['x-ratelimit-limit']).toBeUndefined()
    await statuses(before, 99, get('/items'))
    await statuses(after, 99, get('/items'))
    const peerRefused = await supertest(before).get('/items')
    const sluiceRefused = await supertest(after).get('/items')
    expect(peerRefused.body).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: 'Rate limit exceeded, retry in 1 minute',
    })
    expect(sluiceRefused.body).toEqual({ error: 'rate limit exceeded', retryAfter: 60 })
    expect(sluiceRefused.headers['retry-after']).toBe(peerRefused.headers['retry-after'])
  })
})

describe('from koa-ratelimit', () => {
  const build = async () => ({
    before: await listen(before<Koa>('koa-ratelimit')().callback()),
    after: await listen(koaAfter().callback()),
  })
  const withKey = (key: string) => (agent: supertest.Agent) => agent.get('/items').set('x-api-key', key)

  test('both admit 100 a minute per API key (or address), and never limit /health', async () => {
    freezeAtWindowStart(60_000)
    const { before, after } = await build()
    for (const server of [before, after]) {
      expect(await statuses(server, 102, withKey('key-a'))).toEqual([...times(100, 200), 429, 429])
      expect(await statuses(server, 1, withKey('key-b'))).toEqual([200])
      expect(await statuses(server, 101, get('/items'))).toEqual([...times(100, 200), 429])
      expect(await statuses(server, 3, get('/health'))).toEqual(times(3, 200))
    }
  })

  test("X-RateLimit-Reset: a Unix time in seconds in both, koa-ratelimit's with a fraction", async () => {
    const start = freezeAtWindowStart(60_000)
    const { before, after } = await build()
    const peer = await supertest(before).get('/items')
    const sluice = await supertest(after).get('/items')
    for (const response of [peer, sluice]) {
      expect(response.headers).toMatchObject({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '99' })
    }
    expect(peer.headers['x-ratelimit-reset']).toMatch(/^\d{10}(\.\d+)?$/)
    expect(sluice.headers['x-ratelimit-reset']).toBe(String(start / 1000 + 60))
  })
})

describe('from rate-limiter-flexible', () => {
  const build = async () => ({
    before: await listen(before<RequestListener>('rate-limiter-flexible')()),
    after: await listen(flexibleAfter()),
  })

  test('both admit 10 a second per client, refuse the rest with Retry-After: 1, and admit again the next second', async () => {
    const start = freezeAtWindowStart(1000)
    const { before, after } = await build()
    for (const server of [before, after]) {
      expect(await statuses(server, 12, get('/items'))).toEqual([...times(10, 200), 429, 429])
      const refused = await supertest(server).get('/items')
      expect(refused.status).toBe(429)
      expect(refused.headers['retry-after']).toBe('1')
      expect(refused.text).toBe('Too Many Requests')
    }
    jest.setSystemTime(start + 1000)
    for (const server of [before, after]) {
      expect(await statuses(server, 11, get('/items'))).toEqual([...times(10, 200), 429])
    }
  })
})
